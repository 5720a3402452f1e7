// SPDX-License-Identifier: MIT
/*
 * plt_page: what making one mapped text page of libc private costs, three
 * ways (docs/bench.md "The PLT pass in place"; not a test). Each round
 * maps 64 pages of libc's text afresh, reads page 1 (mapped, as libc's
 * PLT page is at start-up), then times one of: (0) mprotect read-write,
 * stores, mprotect read-execute (src/interpose/plt.c, alone); (1) the same
 * with rtlive.c's pagemap check, MADV_DONTNEED and MADV_POPULATE_WRITE
 * first; (2) an anonymous populated copy, stores, sealed, compared,
 * moved over the page with mremap (the copy path). Medians of 2,000.
 *
 *   cc -O2 -o plt_page bench/plt_page.c && taskset -c 1 ./plt_page
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY), N = 2000;
	double t[3][2000];
	volatile unsigned long sink = 0;
	for (int r = 0; r < N; r++) {
		for (int v = 0; v < 3; v++) {
			/* a fresh text mapping of 64 pages, page 1 read (mapped) */
			unsigned char *m = mmap(NULL, 64 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0x26000);
			unsigned char *p = m + 4096;
			sink += p[0] + p[100];
			double a = now();
			if (v == 0) {
				mprotect(p, 4096, PROT_READ | PROT_WRITE);
				for (int i = 0; i < 50; i++) ((volatile unsigned long *)p)[i * 8] = 0x1234;
				mprotect(p, 4096, PROT_READ | PROT_EXEC);
			} else if (v == 1) {
				mprotect(p, 4096, PROT_READ | PROT_WRITE);
				int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
				unsigned long e; pread(pm, &e, 8, (unsigned long)p / 4096 * 8); close(pm);
				madvise(p, 4096, MADV_DONTNEED);
				madvise(p, 4096, MADV_POPULATE_WRITE);
				for (int i = 0; i < 50; i++) ((volatile unsigned long *)p)[i * 8] = 0x1234;
				mprotect(p, 4096, PROT_READ | PROT_EXEC);
			} else {
				unsigned char *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
				memcpy(c, p, 4096);
				for (int i = 0; i < 50; i++) ((volatile unsigned long *)c)[i * 8] = 0x1234;
				mprotect(c, 4096, PROT_READ | PROT_EXEC);
				sink += memcmp(c, p, 4096) != 0;
				mremap(c, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, p);
			}
			t[v][r] = now() - a;
			sink += p[8];
			munmap(m, 64 * 4096);
		}
	}
	const char *name[] = { "in place (COW fault)", "in place, pagemap+DONTNEED+POPULATE", "copy+seal+mremap" };
	for (int v = 0; v < 3; v++) {
		qsort(t[v], N, sizeof(double), cmp);
		printf("%-40s median %.2f us  p25 %.2f  p75 %.2f\n", name[v], t[v][N / 2], t[v][N / 4], t[v][3 * N / 4]);
	}
	return 0;
}
