/* SPDX-License-Identifier: MIT */
/*
 * kCFI test program: indirect calls of every arity 0..7 (plus 8 arguments,
 * some on the stack), tail calls, static address-taken functions, a call
 * through a thunk without a kCFI check, a pointer to a libc function and a
 * naked-ENDBR function written in assembly. Exits 0 when every call
 * returned what it should. See README.
 *
 *   prog            run the legal calls, print "ok", exit 0
 *   prog libc       also call write() through a pointer (traps under kCFI:
 *                   libc has no kCFI preamble before write)
 *   prog naked      call the naked-ENDBR asm function through a pointer
 *                   (traps under kCFI: no hash before it)
 *   prog pivot      call through naked_endbr+16: a FineIBT caller moves
 *                   r11 back 16 bytes and lands on the naked ENDBR, so
 *                   plain fineibt lets it through (prints "pivot 2") and
 *                   paranoid and kcfi trap; crashes when not kCFI at all
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

#define NOINLINE __attribute__((noinline))

/* Integer-register arity 0..7 (7 = arguments on the stack too). */
NOINLINE static long a0(void) { return 100; }
NOINLINE static long a1(long a) { return a + 1; }
NOINLINE static long a2(long a, long b) { return a + b; }
NOINLINE static long a3(long a, long b, long c) { return a + b + c; }
NOINLINE static long a4(long a, long b, long c, long d)
{
	return a + b + c + d;
}
NOINLINE long a5(long a, long b, long c, long d, long e)
{
	return a + b + c + d + e;
}
NOINLINE long a6(long a, long b, long c, long d, long e, long f)
{
	return a + b + c + d + e + f;
}
NOINLINE long a7(long a, long b, long c, long d, long e, long f, long g)
{
	return a + b + c + d + e + f + g;
}
NOINLINE long a8(long a, long b, long c, long d, long e, long f, long g,
		 long h)
{
	return a + b + c + d + e + f + g + h;
}

/* An unused and a floating-point parameter do not count toward arity. */
NOINLINE static long a1_unused(long a, long unused) { return a * 3; }
NOINLINE static double fp1(double x) { return x * 2; }

typedef long (*fn0_t)(void);
typedef long (*fn1_t)(long);
typedef long (*fn2_t)(long, long);
typedef long (*fn3_t)(long, long, long);
typedef long (*fn4_t)(long, long, long, long);
typedef long (*fn5_t)(long, long, long, long, long);
typedef long (*fn6_t)(long, long, long, long, long, long);
typedef long (*fn7_t)(long, long, long, long, long, long, long);
typedef long (*fn8_t)(long, long, long, long, long, long, long, long);
typedef double (*fnd_t)(double);
typedef ssize_t (*write_t)(int, const void *, size_t);

/* volatile: keep the compiler from turning indirect calls direct */
static fn0_t volatile p0 = a0;
static fn1_t volatile p1 = a1;
static fn2_t volatile p2 = a2;
static fn3_t volatile p3 = a3;
static fn4_t volatile p4 = a4;
static fn5_t volatile p5 = a5;
static fn6_t volatile p6 = a6;
static fn7_t volatile p7 = a7;
static fn8_t volatile p8 = a8;
static fn2_t volatile p1u = a1_unused;
static fnd_t volatile pd = fp1;
static write_t volatile pw = write;
static fn1_t volatile pnaked = naked_endbr;
static fn1_t volatile ppivot = (fn1_t)((char *)naked_endbr + 16);

/* Tail calls: the last act is a call through a pointer (cs jmp thunk). */
NOINLINE static long tail1(fn1_t f, long x) { return f(x + 1); }
NOINLINE long tail3(fn3_t f, long x) { return f(x, x, x); }

/* An indirect call built without kCFI: a thunk call with no check. */
__attribute__((no_sanitize("kcfi"))) NOINLINE static long
unchecked(fn1_t f, long x)
{
	return f(x) + 1;
}

/* Callback handed to the shared object, which calls it indirectly. */
NOINLINE static long cb(long x) { return x * 10; }

static int failures;

static void expect(const char *what, long got, long want)
{
	if (got != want) {
		fprintf(stderr, "prog: %s: got %ld, want %ld\n", what, got, want);
		failures++;
	}
}

static void run_arity(void)
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
	expect("unused", p1u(5, 9), 15);
	expect("double", (long)pd(2.5), 5);
}

static void run_other(void)
{
	expect("tail1", tail1(p1, 1), 3);
	expect("tail3", tail3(p3, 2), 6);
	expect("unchecked", unchecked(p1, 4), 6);
	expect("naked direct", naked_endbr(41), 42);
#ifdef PROG_DSO
	expect("dso callback", dso_apply(cb, 4), 40);
	expect("dso op", dso_op(2)(20, 22), 42);
	expect("dso tail", dso_tail(p2, 3), 6);
#else
	expect("callback", cb(4), 40);
#endif
}

int main(int argc, char **argv)
{
	run_arity();
	run_other();
	if (argc > 1 && !strcmp(argv[1], "libc"))
		expect("libc write", pw(1, "libc\n", 5), 5);
	if (argc > 1 && !strcmp(argv[1], "naked"))
		expect("naked indirect", pnaked(1), 2);
	if (argc > 1 && !strcmp(argv[1], "pivot"))
		printf("pivot %ld\n", ppivot(1));
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
