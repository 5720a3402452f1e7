/* SPDX-License-Identifier: MIT */
/*
 * What a page of fresh anonymous memory costs when it is first written,
 * three ways (docs/bench.md "Page faults"): touched page by page (one
 * page fault each), faulted in beforehand by MADV_POPULATE_WRITE (one
 * system call: seq/rawsys.h fi_prefault, what the runtime does for its
 * large blocks), and by mmap's MAP_POPULATE. Each round maps, writes one
 * byte per page and unmaps a block of PAGES pages in each of the three
 * ways, interleaved; prints the median per page over ROUNDS rounds.
 *
 *   bench/pagefault [PAGES [ROUNDS]]     (default 80 pages, 201 rounds)
 *
 * Not a test: prints numbers. Run pinned (taskset -c 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bench_util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { TOUCH, MADVISE, MAP_POP, WAYS };

static double one(int way, size_t pages)
{
	size_t len = pages * 4096;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (way == MAP_POP ? MAP_POPULATE : 0);
	double t0 = bench_now(CLOCK_MONOTONIC), t1;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	if (way == MADVISE && madvise((void *)p, len, MADV_POPULATE_WRITE)) {
		perror("madvise(MADV_POPULATE_WRITE)");
		exit(1);
	}
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	t1 = bench_now(CLOCK_MONOTONIC);
	munmap((void *)p, len);
	return (t1 - t0) * 1e6 / (double)pages;
}

int main(int argc, char **argv)
{
	static const char *const name[WAYS] = {
		"touched (a fault a page)", "MADV_POPULATE_WRITE first",
		"mmap MAP_POPULATE",
	};
	size_t pages = argc > 1 ? strtoul(argv[1], NULL, 0) : 80;
	int rounds = argc > 2 ? atoi(argv[2]) : 201;
	double *t[WAYS];

	if (!pages || rounds < 1) {
		fprintf(stderr, "usage: pagefault [PAGES [ROUNDS]]\n");
		return 2;
	}
	for (int w = 0; w < WAYS; w++)
		t[w] = calloc((size_t)rounds, sizeof(double));
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < WAYS; k++) {
			int w = (k + r) % WAYS;

			t[w][r] = one(w, pages);
		}
	printf("%zu pages a block, %d rounds, median us per page:\n", pages, rounds);
	for (int w = 0; w < WAYS; w++)
		printf("  %-28s %6.2f\n", name[w], bench_median(t[w], rounds));
	return 0;
}
