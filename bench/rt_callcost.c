// SPDX-License-Identifier: MIT
/*
 * Cost of one indirect call per mode (bench/rt_callcost.sh runs it under
 * each FINEIBT_CFI): N calls through a pointer to a function of arity 0, 1
 * and 2; prints nanoseconds per call for each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static long f0(void) { return 1; }
NOINLINE static long f1(long a) { return a + 1; }
NOINLINE static long f2(long a, long b) { return a + b; }

static long (*volatile p0)(void) = f0;
static long (*volatile p1)(long) = f1;
static long (*volatile p2)(long, long) = f2;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000000, s = 0;
	double t0, t1, t2, t3;

	t0 = now_ns();
	for (long i = 0; i < n; i++)
		s += p0();
	t1 = now_ns();
	for (long i = 0; i < n; i++)
		s += p1(i);
	t2 = now_ns();
	for (long i = 0; i < n; i++)
		s += p2(i, 1);
	t3 = now_ns();
	printf("%.3f %.3f %.3f %ld\n", (t1 - t0) / n, (t2 - t1) / n,
	       (t3 - t2) / n, s & 1);
	return 0;
}
