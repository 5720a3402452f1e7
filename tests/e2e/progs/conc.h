/* SPDX-License-Identifier: MIT */
/* Shared by the conc_*.c programs of tests/e2e/concurrency.sh. */
#ifndef CONC_H
#define CONC_H

typedef long (*conc_fn1_t)(long);
/* A type no function has: a call through it is a CFI failure. */
typedef long (*conc_bad_t)(const char *, long);

typedef long (*conc_apply_t)(conc_fn1_t f, long x);
typedef conc_fn1_t (*conc_get_t)(void);

#endif
