/* SPDX-License-Identifier: MIT */
/*
 * The code under measurement, shared by the three builds of bench/calls:
 * C compiled by fineibt-cc (patched at load time), the same C compiled by
 * plain clang-22 (no CFI), and bench/floor.S (the sequences by hand).
 */
#ifndef BENCH_CALLS_H
#define BENCH_CALLS_H

/* Callees: NFUNCS functions, each alone in a CALLEE_STRIDE-byte slot. */
#ifndef NFUNCS
#define NFUNCS		4096
#endif
#define CALLEE_STRIDE	256

#ifndef __ASSEMBLER__
/* Two integer arguments: kCFI arity 2, so bhi goes through a stub call. */
typedef long (*bench_fn)(long, long);

/* acc = fp(acc, i) for i in [0, n): one indirect call per iteration. */
long bench_hot(long n, bench_fn fp);
/* acc = tab[i](acc, i) for i in [0, n). */
long bench_cold(long n, const bench_fn *tab);

/*
 * acc += tab[i](i, 1) for i in [0, n): independent calls. Weak: the
 * floor builds (bench/floor.S) do not have it.
 */
long bench_indep(long n, const bench_fn *tab) __attribute__((weak));

/* The callees (each returns a + b), in address order. */
extern const bench_fn bench_funcs[NFUNCS];
#endif

#endif /* BENCH_CALLS_H */
