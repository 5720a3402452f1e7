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
#include "bench_util.h"

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
		double t0 = bench_now(CLOCK_MONOTONIC);

		if (fi_image_open(&im, argv[1], err, sizeof(err))) {
			fprintf(stderr, "Error: %s: %s\n", argv[1], err);
			return 1;
		}
		t_open[r] = bench_now(CLOCK_MONOTONIC) - t0;
		t0 = bench_now(CLOCK_MONOTONIC);
		fi_elf_discover(&im);
		t_disc[r] = bench_now(CLOCK_MONOTONIC) - t0;
		sites = im.nfuncs + im.ncalls + im.ntcalls;
		if (r == runs - 1)
			printf("%s: %zu bytes, %zu preambles, %zu call sites, %zu thunk calls, "
			       "%zu naked, %zu symbols\n", argv[1], im.file_size, im.nfuncs,
			       im.ncalls, im.ntcalls, im.nnaked, im.nsyms);
		fi_image_close(&im);
	}
	double mo = bench_median(t_open, runs), md = bench_median(t_disc, runs);

	printf("open+discover: median %.2f ms over %d runs = %.1f M sites/s\n",
	       mo * 1e3, runs, sites / mo / 1e6);
	printf("discover only: median %.2f ms over %d runs = %.1f M sites/s\n",
	       md * 1e3, runs, sites / md / 1e6);
	return 0;
}
