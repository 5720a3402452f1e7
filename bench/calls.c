// SPDX-License-Identifier: MIT
/*
 * calls: the cost of one indirect call, hot and cold.
 *
 *   hot:  bench_hot() calls one callee N times (the branch predictor and
 *         the caches know the target);
 *   cold: bench_cold() calls NFUNCS callees, 256 bytes apart (1 MiB of
 *         text for 4096), each round in a fresh shuffled order, so the
 *         target is mispredicted and kCFI's load of the hash at target-15
 *         misses L1d (and L2 too when NFUNCS=16384 or more).
 *
 * Usage: calls [-H hot_calls] [-C cold_calls] [-r reps] [-p cpu] [-d]
 * Prints one line of key=value pairs: per-call medians and minima in ns
 * over the repetitions. -d adds hex dumps of bench_hot and of the first
 * callee (from 16 bytes before their entry) as the process sees them after
 * the runtime patched them. Exits 1 if a loop returns a wrong sum (the
 * calls did not all happen). Times are never asserted on: bench.py only
 * reports them.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calls.h"

#define MAX_REPS	101
#define DUMP_PRE	16	/* bytes before the entry: the preamble */
#define DUMP_HOT	78	/* bytes of bench_hot after its entry */
#define DUMP_CALLEE	8

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Small n: insertion sort keeps the driver free of libc callbacks. */
static void sort_doubles(double *v, int n)
{
	for (int i = 1; i < n; i++) {
		double x = v[i];
		int j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Rounds of all NFUNCS callees, each round shuffled (fixed seed). */
static bench_fn *make_order(long n)
{
	bench_fn *t = malloc(n * sizeof(*t));
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	if (!t)
		return NULL;
	for (long base = 0; base < n; base += NFUNCS) {
		long m = n - base < NFUNCS ? n - base : NFUNCS;
		bench_fn *r = t + base;

		for (long i = 0; i < m; i++)
			r[i] = bench_funcs[i];
		for (long i = m - 1; i > 0; i--) {
			long j = xorshift(&seed) % (i + 1);
			bench_fn x = r[i];

			r[i] = r[j];
			r[j] = x;
		}
	}
	return t;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("calls: sched_setaffinity (continuing unpinned)");
}

static void dump(const char *key, const void *p, int len)
{
	const unsigned char *b = p;

	printf(" %s=", key);
	for (int i = 0; i < len; i++)
		printf("%02x", b[i]);
}

int main(int argc, char **argv)
{
	long hot_n = 1L << 21, cold_n = 1L << 19;
	int reps = 7, cpu = -1, opt;
	double hot[MAX_REPS], cold[MAX_REPS];
	bool do_dump = false;
	bench_fn *order;

	while ((opt = getopt(argc, argv, "H:C:r:p:d")) != -1) {
		switch (opt) {
		case 'H': hot_n = atol(optarg); break;
		case 'C': cold_n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'p': cpu = atoi(optarg); break;
		case 'd': do_dump = true; break;
		default:
			fprintf(stderr, "usage: calls [-H hot] [-C cold] [-r reps] [-p cpu] [-d]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || hot_n < 1 || cold_n < 1) {
		fprintf(stderr, "calls: reps 1..%d, calls >= 1\n", MAX_REPS);
		return 2;
	}
	pin(cpu);
	order = make_order(cold_n);
	if (!order) {
		perror("calls: malloc");
		return 1;
	}
	/* Warm up (page faults, predictors), and check the sums once. */
	if (bench_hot(hot_n, bench_funcs[0]) != hot_n * (hot_n - 1) / 2 ||
	    bench_cold(cold_n, order) != cold_n * (cold_n - 1) / 2) {
		fprintf(stderr, "calls: wrong result: the loops are broken\n");
		return 1;
	}
	/* Alternate hot and cold so that drift hits both alike. */
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns(), t1, t2;

		bench_hot(hot_n, bench_funcs[0]);
		t1 = now_ns();
		bench_cold(cold_n, order);
		t2 = now_ns();
		hot[r] = (t1 - t0) / hot_n;
		cold[r] = (t2 - t1) / cold_n;
	}
	sort_doubles(hot, reps);
	sort_doubles(cold, reps);
	printf("hot_ns=%.4f cold_ns=%.4f hot_min=%.4f cold_min=%.4f",
	       hot[reps / 2], cold[reps / 2], hot[0], cold[0]);
	if (do_dump) {
		dump("hot_code", (const char *)bench_hot - DUMP_PRE,
		     DUMP_PRE + DUMP_HOT);
		dump("callee_code", (const char *)bench_funcs[0] - DUMP_PRE,
		     DUMP_PRE + DUMP_CALLEE);
	}
	printf("\n");
	free(order);
	return 0;
}
