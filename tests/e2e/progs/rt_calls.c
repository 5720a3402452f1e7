// SPDX-License-Identifier: MIT
/*
 * End-to-end program for tests/e2e/rt_modes.sh, built with fineibt-cc.
 *
 *   rt_calls legal          arity 0..8 and tail calls; prints "legal ok"
 *   rt_calls confuse CASE   a type-confused call, CASE = call1 call2 jmp1
 *                           jmp2 (call or tail-jmp site; callee arity 1/2);
 *                           prints "survived CASE" if it returns
 *   rt_calls naked BIAS     call the naked-ENDBR asm function through a
 *                           pointer biased by BIAS bytes (16 lands a
 *                           FineIBT caller, after its lea -16, on the ENDBR)
 *   rt_calls sigill         install our own SIGILL handler, raise a SIGILL
 *                           that is not a CFI trap (prints "own handler"),
 *                           then make a confused call (must not be
 *                           swallowed by our handler)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static long a0(void) { return 100; }
NOINLINE static long a1(long a) { return a + 1; }
NOINLINE static long a2(long a, long b) { return a + b; }
NOINLINE static long a3(long a, long b, long c) { return a + b + c; }
NOINLINE static long a4(long a, long b, long c, long d)
{
	return a + b + c + d;
}
NOINLINE static long a5(long a, long b, long c, long d, long e)
{
	return a + b + c + d + e;
}
NOINLINE static long a6(long a, long b, long c, long d, long e, long f)
{
	return a + b + c + d + e + f;
}
NOINLINE static long a7(long a, long b, long c, long d, long e, long f,
			long g)
{
	return a + b + c + d + e + f + g;
}
NOINLINE static long a8(long a, long b, long c, long d, long e, long f,
			long g, long h)
{
	return a + b + c + d + e + f + g + h;
}

typedef long (*fn0_t)(void);
typedef long (*fn1_t)(long);
typedef long (*fn2_t)(long, long);
typedef long (*fn3_t)(long, long, long);
typedef long (*fn4_t)(long, long, long, long);
typedef long (*fn5_t)(long, long, long, long, long);
typedef long (*fn6_t)(long, long, long, long, long, long);
typedef long (*fn7_t)(long, long, long, long, long, long, long);
typedef long (*fn8_t)(long, long, long, long, long, long, long, long);
/* A type no function here has: the confused calls use it. */
typedef long (*fnp_t)(const char *, long);

static fn0_t volatile p0 = a0;
static fn1_t volatile p1 = a1;
static fn2_t volatile p2 = a2;
static fn3_t volatile p3 = a3;
static fn4_t volatile p4 = a4;
static fn5_t volatile p5 = a5;
static fn6_t volatile p6 = a6;
static fn7_t volatile p7 = a7;
static fn8_t volatile p8 = a8;

long naked_endbr(long x);	/* rt_naked.S */

/* Tail calls: the last act is a call through a pointer (cs jmp thunk). */
NOINLINE static long tail1(fn1_t f, long x) { return f(x + 1); }
NOINLINE static long tail2(fn2_t f, long x) { return f(x, x); }
NOINLINE static long tailp(fnp_t f, long x) { return f("x", x); }
NOINLINE static long callp(fnp_t f, long x) { return f("x", x) + 1; }

static int failures;

static void expect(const char *what, long got, long want)
{
	if (got != want) {
		fprintf(stderr, "rt_calls: %s: got %ld, want %ld\n", what,
			got, want);
		failures++;
	}
}

static int run_legal(void)
{
	expect("arity0", p0(), 100);
	expect("arity1", p1(1), 2);
	expect("arity2", p2(1, 2), 3);
	expect("arity3", p3(1, 2, 3), 6);
	expect("arity4", p4(1, 2, 3, 4), 10);
	expect("arity5", p5(1, 2, 3, 4, 5), 15);
	expect("arity6", p6(1, 2, 3, 4, 5, 6), 21);
	expect("arity7", p7(1, 2, 3, 4, 5, 6, 7), 28);
	expect("arity8", p8(1, 2, 3, 4, 5, 6, 7, 8), 36);
	expect("tail1", tail1(p1, 1), 3);
	expect("tail2", tail2(p2, 4), 8);
	if (failures)
		return 1;
	printf("legal ok\n");
	return 0;
}

static int run_confuse(const char *which)
{
	fnp_t f1 = (fnp_t)(void *)p1, f2 = (fnp_t)(void *)p2;

	fflush(stdout);
	if (!strcmp(which, "call1"))
		callp(f1, 1);
	else if (!strcmp(which, "call2"))
		callp(f2, 1);
	else if (!strcmp(which, "jmp1"))
		tailp(f1, 1);
	else if (!strcmp(which, "jmp2"))
		tailp(f2, 1);
	else
		return 2;
	printf("survived %s\n", which);
	return 0;
}

static int run_naked(long bias)
{
	fn1_t f = (fn1_t)(void *)((char *)naked_endbr + bias);
	fn1_t volatile pf = f;

	fflush(stdout);
	printf("naked returned %ld\n", pf(41));
	return 0;
}

static volatile sig_atomic_t own_hits;

static void own_sigill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	own_hits++;
	/* Skip our own 2-byte ud2. */
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static int run_sigill(void)
{
	struct sigaction sa = { .sa_sigaction = own_sigill,
				.sa_flags = SA_SIGINFO };

	sigaction(SIGILL, &sa, NULL);
	__asm__ volatile("ud2");
	if (own_hits != 1)
		return 3;
	printf("own handler\n");
	return run_confuse("call1");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2 || !strcmp(argv[1], "legal"))
		return run_legal();
	if (!strcmp(argv[1], "confuse") && argc > 2)
		return run_confuse(argv[2]);
	if (!strcmp(argv[1], "naked") && argc > 2)
		return run_naked(atol(argv[2]));
	if (!strcmp(argv[1], "sigill"))
		return run_sigill();
	return 2;
}
