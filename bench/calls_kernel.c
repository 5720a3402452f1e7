// SPDX-License-Identifier: MIT
/*
 * The two measured loops, in C. bench/floor.S repeats them instruction for
 * instruction with the CFI sequences written by hand; bench.py checks that
 * the patched bytes and the hand-written ones differ only in immediates.
 * Aligned to 64 so that both builds place the loop the same way.
 */
#include "calls.h"

__attribute__((noinline, aligned(64))) long bench_hot(long n, bench_fn fp)
{
	long acc = 0;

	for (long i = 0; i < n; i++)
		acc = fp(acc, i);
	return acc;
}

__attribute__((noinline, aligned(64))) long bench_cold(long n,
							const bench_fn *tab)
{
	long acc = 0;

	for (long i = 0; i < n; i++)
		acc = tab[i](acc, i);
	return acc;
}

/*
 * The calls do not depend on each other (the arguments do not use acc),
 * so the CPU overlaps them: a check that loads from the target (kCFI's
 * and the paranoid caller's hash load, which misses with a cold target)
 * shows here, where bench_cold's chain through acc hides it. Only in
 * this C build: the hand-written floors have no such loop.
 */
__attribute__((noinline, aligned(64))) long bench_indep(long n,
							 const bench_fn *tab)
{
	long acc = 0;

	for (long i = 0; i < n; i++)
		acc += tab[i](i, 1);
	return acc;
}
