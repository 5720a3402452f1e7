/* SPDX-License-Identifier: MIT */
/* Shared declarations of the test programs (see README). */
#ifndef FI_PROGS_H
#define FI_PROGS_H

/* naked.S: endbr64 and no kCFI preamble; returns x + 1. */
long naked_endbr(long x);

/* dso.c (libfiprog.so) */
typedef long (*dso_fn1_t)(long);
typedef long (*dso_fn2_t)(long, long);
long dso_apply(dso_fn1_t f, long x);
dso_fn2_t dso_op(int which);
long dso_tail(dso_fn2_t f, long x);

#endif
