// SPDX-License-Identifier: MIT
/*
 * End-to-end program for tests/e2e/rt_variadic.sh, built with fineibt-cc.
 * The SysV ABI passes the number of vector registers a variadic call uses
 * in %al; a callee that finds 0 there skips saving %xmm0-7 and its
 * va_arg(double) reads garbage. A check sequence that leaves %eax = 0 on
 * success (the kernel's v6.18 "sub $hash, %eax") would do exactly that to
 * every variadic call through a pointer: see docs/sequences.md.
 *
 *   rt_variadic calls    variadic calls with doubles through pointers
 *                        (call and tail-call sites); prints the results
 *   rt_variadic al0      the hazard itself: the same callee called with
 *                        %al = 0 (rt_variadic_al0.S); prints what
 *                        va_arg read
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE double vsum(int n, ...)
{
	double s = 0;
	va_list ap;

	va_start(ap, n);
	while (n-- > 0)
		s += va_arg(ap, double);
	va_end(ap);
	return s;
}

/* Integers and doubles interleaved: int regs and xmm regs both in use. */
NOINLINE static double vmixed(const char *fmt, ...)
{
	double s = 0;
	va_list ap;

	va_start(ap, fmt);
	for (; *fmt; fmt++)
		s += *fmt == 'd' ? va_arg(ap, double) : (double)va_arg(ap, int);
	va_end(ap);
	return s;
}

typedef double (*vsum_t)(int, ...);
typedef double (*vmixed_t)(const char *, ...);

/* volatile: the calls stay indirect, through a checked call site. */
static vsum_t volatile vsum_p = vsum;
static vmixed_t volatile vmixed_p = vmixed;

/* A tail call through the pointer: a checked jmp site. */
NOINLINE static double tail(double a, double b)
{
	return vsum_p(2, a, b);
}

/* Leave no stale copy of the test values in the stack below us. */
NOINLINE static void scrub(void)
{
	volatile char buf[8192];

	memset((char *)buf, 0, sizeof(buf));
}

double call_al0(vsum_t f, double x);

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "calls")) {
		printf("sum %.4f\n", vsum_p(4, 1.5, 2.25, 3.125, 4.0625));
		printf("many %.4f\n", vsum_p(9, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0,
					     7.0, 8.0, 9.5));
		printf("mixed %.4f\n", vmixed_p("idid", 1, 0.5, 2, 0.25));
		printf("tail %.4f\n", tail(0.125, 8.0));
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "al0")) {
		scrub();
		printf("al0 %.4f\n", call_al0(vsum, 12345.6875));
		return 0;
	}
	fprintf(stderr, "usage: rt_variadic calls|al0\n");
	return 2;
}
