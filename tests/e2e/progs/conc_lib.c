/* SPDX-License-Identifier: MIT */
/*
 * libconc.so: the kCFI library conc_dl dlopen's and dlclose's in a loop.
 * conc_lib_apply calls the executable back through a pointer,
 * conc_lib_get hands out a pointer to its own static function, and
 * conc_lib_bad makes a type-confused call (a CFI failure in every mode
 * but off).
 */
#include "conc.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static long triple(long x) { return 3 * x; }

long conc_lib_apply(conc_fn1_t f, long x)
{
	return f(x);
}

conc_fn1_t conc_lib_get(void)
{
	return triple;
}

long conc_lib_bad(conc_fn1_t f, long x)
{
	conc_bad_t g = (conc_bad_t)(void *)f;

	return g("bad", x);
}
