/* SPDX-License-Identifier: MIT */
/*
 * The per-module copy of the indirect thunks, hidden: the one definition
 * and the reasons are in src/seq/thunks.S.
 */
#define FI_THUNKS_HIDDEN 1
#include "../src/seq/thunks.S"
