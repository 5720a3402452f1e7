/* SPDX-License-Identifier: MIT */
/*
 * The layout shared by a module's checking thunks (thunks.S, FI_THUNKS_HIDDEN)
 * and the runtime's coarse check they jump to (src/rt/coarse.S): the
 * check of register n (encoding order, rax = 0 ... r15 = 15) is at
 * __fineibt_coarse + n * FI_COARSE_STRIDE. Assembler-friendly.
 */
#ifndef FI_THUNKS_H
#define FI_THUNKS_H

#define FI_COARSE_STRIDE	128

#endif /* FI_THUNKS_H */
