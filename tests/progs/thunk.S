/* SPDX-License-Identifier: MIT */
/*
 * The retpoline-external thunks the kCFI flags call through, for test
 * programs built without fineibt-cc: the project's one definition
 * (src/seq/thunks.S), hidden, as fineibt-cc links it into every module.
 */
#include "../../crt/thunks.S"
