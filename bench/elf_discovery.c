/* SPDX-License-Identifier: MIT */
/*
 * How fast the ELF reader finds sites: fi_image_open (read, parse,
 * relocate, discover) and fi_elf_discover alone (what a re-scan of live
 * memory costs), each the median of RUNS runs, as sites per second.
 * Usage: elf_discovery FILE [RUNS]      (bench/elf_discovery.sh builds it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "elf_int.h"
#include "image.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	double t_open[64], t_disc[64];
	struct fi_image im;
	char err[256];
	size_t sites;

	if (argc < 2 || runs < 1 || runs > 64) {
		fprintf(stderr, "usage: elf_discovery FILE [RUNS<=64]\n");
		return 2;
	}
	for (int r = 0; r < runs; r++) {
		double t0 = now();

		if (fi_image_open(&im, argv[1], err, sizeof(err))) {
			fprintf(stderr, "Error: %s: %s\n", argv[1], err);
			return 1;
		}
		t_open[r] = now() - t0;
		t0 = now();
		fi_elf_discover(&im);
		t_disc[r] = now() - t0;
		sites = im.nfuncs + im.ncalls + im.ntcalls;
		if (r == runs - 1)
			printf("%s: %zu bytes, %zu preambles, %zu call sites, %zu thunk calls, "
			       "%zu naked, %zu symbols\n", argv[1], im.file_size, im.nfuncs,
			       im.ncalls, im.ntcalls, im.nnaked, im.nsyms);
		fi_image_close(&im);
	}
	double mo = median(t_open, runs), md = median(t_disc, runs);

	printf("open+discover: median %.2f ms over %d runs = %.1f M sites/s\n",
	       mo * 1e3, runs, sites / mo / 1e6);
	printf("discover only: median %.2f ms over %d runs = %.1f M sites/s\n",
	       md * 1e3, runs, sites / md / 1e6);
	return 0;
}
