/* SPDX-License-Identifier: MIT */
/* Timing helpers shared by the C benchmarks: a clock read and a median. */
#ifndef FI_BENCH_UTIL_H
#define FI_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place. */
static inline double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
