/* SPDX-License-Identifier: MIT */
/*
 * The layout shared by a module's checking thunks (thunks.S, FI_THUNKS_HIDDEN)
 * and the runtime's coarse check they jump to (src/rt/coarse.S): the
 * check of register n (encoding order, rax = 0 ... r15 = 15) is at
 * __fineibt_coarse + n * FI_COARSE_STRIDE, entered with r11 (or, for
 * r11's, r10) free, and for r11's with the caller's r10 pushed: an ABI
 * between every module's crt and the runtime (change it only with a new
 * symbol name). Assembler-friendly.
 */
#ifndef FI_THUNKS_H
#define FI_THUNKS_H

#define FI_COARSE_STRIDE	128

#endif /* FI_THUNKS_H */
