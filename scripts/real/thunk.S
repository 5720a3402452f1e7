/* SPDX-License-Identifier: MIT */
/*
 * The thunks for the "kCFI, unpatched" stand-in compiler (standin-cc):
 * the project's one definition (src/seq/thunks.S), hidden, so each module
 * links its own copy.
 */
#include "../../crt/thunks.S"
