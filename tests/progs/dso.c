/* SPDX-License-Identifier: MIT */
/*
 * libfiprog.so: a kCFI shared object used by the test programs. It calls
 * the executable's callbacks indirectly and hands out pointers to its own
 * static functions, whose preambles live in this object.
 */
#include "progs.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static long add(long a, long b) { return a + b; }
NOINLINE static long sub(long a, long b) { return a - b; }
NOINLINE static long mul(long a, long b) { return a * b; }

static dso_fn2_t const volatile ops[] = { sub, mul, add };

long dso_apply(dso_fn1_t f, long x)
{
	return f(x);
}

dso_fn2_t dso_op(int which)
{
	return ops[which % 3];
}

/* Tail call inside the DSO. */
long dso_tail(dso_fn2_t f, long x)
{
	return f(x, x);
}
