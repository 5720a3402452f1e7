// SPDX-License-Identifier: MIT
/*
 * calls: the cost of one indirect call, hot and cold.
 *
 *   hot:  bench_hot() calls one callee N times (the branch predictor and
 *         the caches know the target);
 *   cold: bench_cold() calls NFUNCS callees, 256 bytes apart (1 MiB of
 *         text for 4096), each round in a fresh shuffled order, so the
 *         target is mispredicted and kCFI's load of the hash at target-15
 *         misses L1d (and L2 too when NFUNCS=16384 or more). Each call
 *         takes the previous result, so the calls form one chain;
 *   indep: bench_indep() makes the same calls in the same order without
 *         the chain (acc += tab[i](i, 1)), so the CPU overlaps them and a
 *         load of the target's hash is no longer hidden behind the call
 *         before it (only builds from C: the floors have no such loop).
 *
 * Usage: calls [-H hot_calls] [-C cold_calls] [-r reps] [-p cpu] [-d]
 *              [-f floor]
 * Prints one line of key=value pairs: per-call medians and minima in ns
 * over the repetitions. -f (bench/calls-cc only) also times the
 * hand-written floor of that name in the same process, alternating with
 * the patched loops repetition by repetition, and prints the ratios
 * patched/hand of the fastest repetitions (inproc_*_ratio) and the
 * medians of the per-repetition ratios (inproc_*_ratio_med). -d adds hex dumps of bench_hot and of the first
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

/*
 * bench/calls-cc also links the hand-written floors of every mode
 * (bench/floor.S with FLOOR_PREFIX), so that -f MODE can time the
 * runtime-patched loops and the hand-written ones in the same process,
 * repetition by repetition: the cleanest patched/hand ratio a shared
 * machine allows.
 */
struct floor {
	const char *name;
	long (*hot)(long, bench_fn);
	long (*cold)(long, const bench_fn *);
	const bench_fn *funcs;
};

#ifdef CALLS_WITH_FLOORS
#define FLOOR_DECL(x)							\
	long floor_##x##_bench_hot(long n, bench_fn fp);		\
	long floor_##x##_bench_cold(long n, const bench_fn *tab);	\
	extern const bench_fn floor_##x##_bench_funcs[NFUNCS];
#define FLOOR_ENTRY(x) { #x, floor_##x##_bench_hot, floor_##x##_bench_cold, \
			 floor_##x##_bench_funcs }
FLOOR_DECL(kcfi) FLOOR_DECL(off) FLOOR_DECL(fineibt) FLOOR_DECL(paranoid)
FLOOR_DECL(bhi) FLOOR_DECL(paranoid_bhi)
/* the same in the v6.18 sequence set (FLOOR_SET=v618) */
FLOOR_DECL(kcfi_v618) FLOOR_DECL(off_v618) FLOOR_DECL(fineibt_v618)
FLOOR_DECL(paranoid_v618) FLOOR_DECL(bhi_v618) FLOOR_DECL(paranoid_bhi_v618)
static const struct floor floors[] = {
	FLOOR_ENTRY(kcfi), FLOOR_ENTRY(off), FLOOR_ENTRY(fineibt),
	FLOOR_ENTRY(paranoid), FLOOR_ENTRY(bhi), FLOOR_ENTRY(paranoid_bhi),
	FLOOR_ENTRY(kcfi_v618), FLOOR_ENTRY(off_v618), FLOOR_ENTRY(fineibt_v618),
	FLOOR_ENTRY(paranoid_v618), FLOOR_ENTRY(bhi_v618),
	FLOOR_ENTRY(paranoid_bhi_v618),
};
#else
static const struct floor floors[] = { { NULL, NULL, NULL, NULL } };
#endif

static const struct floor *find_floor(const char *name)
{
	for (size_t i = 0; i < sizeof(floors) / sizeof(floors[0]); i++) {
		if (floors[i].name && !strcmp(floors[i].name, name))
			return &floors[i];
	}
	return NULL;
}
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
static bench_fn *make_order(long n, const bench_fn *funcs)
{
	bench_fn *t = malloc(n * sizeof(*t));
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	if (!t)
		return NULL;
	for (long base = 0; base < n; base += NFUNCS) {
		long m = n - base < NFUNCS ? n - base : NFUNCS;
		bench_fn *r = t + base;

		for (long i = 0; i < m; i++)
			r[i] = funcs[i];
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

static double ratio_median(double *v, int n)
{
	sort_doubles(v, n);
	return v[n / 2];
}

/*
 * Time hot and cold of @f (and of @g, interleaved, when not NULL). The
 * loops are reached through pointers; the floors' preambles carry their
 * own hash, so these few calls (one per loop run) go unchecked.
 */
__attribute__((no_sanitize("kcfi")))
static void measure(const struct floor *f, const struct floor *g,
		    long hot_n, long cold_n, int reps,
		    const bench_fn *order, const bench_fn *gorder)
{
	double hot[MAX_REPS], cold[MAX_REPS], ghot[MAX_REPS], gcold[MAX_REPS];
	double rh[MAX_REPS], rc[MAX_REPS];

	for (int r = 0; r < reps; r++) {
		/* Alternate who goes first so that drift hits both alike. */
		for (int k = 0; k < 2; k++) {
			bool mine = (k == 0) == (r % 2 == 0);
			const struct floor *x = mine ? f : g;
			double t0, t1, t2;

			if (!x)
				continue;
			t0 = now_ns();
			x->hot(hot_n, x->funcs[0]);
			t1 = now_ns();
			x->cold(cold_n, mine ? order : gorder);
			t2 = now_ns();
			(mine ? hot : ghot)[r] = (t1 - t0) / hot_n;
			(mine ? cold : gcold)[r] = (t2 - t1) / cold_n;
		}
		if (g) {
			rh[r] = hot[r] / ghot[r];
			rc[r] = cold[r] / gcold[r];
		}
	}
	sort_doubles(hot, reps);
	sort_doubles(cold, reps);
	if (g) {
		/*
		 * Best against best: interference on a shared core only adds
		 * time, and both bests come from the same few milliseconds.
		 * The median of the per-repetition ratios is printed too.
		 */
		sort_doubles(ghot, reps);
		sort_doubles(gcold, reps);
		printf("inproc_hot_ratio=%.4f inproc_cold_ratio=%.4f ",
		       hot[0] / ghot[0], cold[0] / gcold[0]);
		printf("inproc_hot_ratio_med=%.4f inproc_cold_ratio_med=%.4f ",
		       ratio_median(rh, reps), ratio_median(rc, reps));
		printf("floor_hot_ns=%.4f floor_cold_ns=%.4f floor_hot_min=%.4f floor_cold_min=%.4f ",
		       ghot[reps / 2], gcold[reps / 2], ghot[0], gcold[0]);
	}
	printf("hot_ns=%.4f cold_ns=%.4f hot_min=%.4f cold_min=%.4f",
	       hot[reps / 2], cold[reps / 2], hot[0], cold[0]);
}

/* The independent-call loop of this build, when it has one. */
static void measure_indep(long n, int reps, const bench_fn *order)
{
	double t[MAX_REPS];

	if (!bench_indep)
		return;
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		bench_indep(n, order);
		t[r] = (now_ns() - t0) / n;
	}
	sort_doubles(t, reps);
	printf(" indep_ns=%.4f indep_min=%.4f", t[reps / 2], t[0]);
}

__attribute__((no_sanitize("kcfi")))
static bool sums_ok(const struct floor *f, long hot_n, long cold_n,
		    const bench_fn *order)
{
	return f->hot(hot_n, f->funcs[0]) == hot_n * (hot_n - 1) / 2 &&
	       f->cold(cold_n, order) == cold_n * (cold_n - 1) / 2;
}

int main(int argc, char **argv)
{
	long hot_n = 1L << 21, cold_n = 1L << 19;
	int reps = 7, cpu = -1, opt;
	const struct floor self = { "self", bench_hot, bench_cold, bench_funcs };
	const struct floor *g = NULL;
	bool do_dump = false;
	bench_fn *order, *gorder = NULL;

	while ((opt = getopt(argc, argv, "H:C:r:p:df:")) != -1) {
		switch (opt) {
		case 'H': hot_n = atol(optarg); break;
		case 'C': cold_n = atol(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'p': cpu = atoi(optarg); break;
		case 'd': do_dump = true; break;
		case 'f':
			g = find_floor(optarg);
			if (!g) {
				fprintf(stderr, "calls: no floor '%s' in this build\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: calls [-H hot] [-C cold] [-r reps] [-p cpu] [-d] [-f floor]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || hot_n < 1 || cold_n < 1) {
		fprintf(stderr, "calls: reps 1..%d, calls >= 1\n", MAX_REPS);
		return 2;
	}
	pin(cpu);
	order = make_order(cold_n, bench_funcs);
	if (g)
		gorder = make_order(cold_n, g->funcs);
	if (!order || (g && !gorder)) {
		perror("calls: malloc");
		return 1;
	}
	/* Warm up (page faults, predictors), and check the sums once. */
	if (!sums_ok(&self, hot_n, cold_n, order) ||
	    (g && !sums_ok(g, hot_n, cold_n, gorder)) ||
	    (bench_indep &&
	     bench_indep(cold_n, order) != cold_n * (cold_n + 1) / 2)) {
		fprintf(stderr, "calls: wrong result: the loops are broken\n");
		return 1;
	}
	measure(&self, g, hot_n, cold_n, reps, order, gorder);
	measure_indep(cold_n, reps, order);
	if (do_dump) {
		dump("hot_code", (const char *)bench_hot - DUMP_PRE,
		     DUMP_PRE + DUMP_HOT);
		dump("callee_code", (const char *)bench_funcs[0] - DUMP_PRE,
		     DUMP_PRE + DUMP_CALLEE);
		if (g) {
			dump("floor_hot_code", (const char *)g->hot - DUMP_PRE,
			     DUMP_PRE + DUMP_HOT);
			dump("floor_callee_code", (const char *)g->funcs[0] - DUMP_PRE,
			     DUMP_PRE + DUMP_CALLEE);
		}
	}
	printf("\n");
	free(order);
	free(gorder);
	return 0;
}
