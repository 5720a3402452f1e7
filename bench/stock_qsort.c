// SPDX-License-Identifier: MIT
/*
 * bench/stock_qsort.sh: libc's qsort sorting fixed-size strings with
 * strcmp handed over directly (libc calls the pointer this module took:
 * under fineibt, a stock kCFI module's typed veneer), ROUNDS times, and
 * its comparisons counted once with "count".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 512
static char words[N][16], work[N][16];
static long ncmp;
/* One checked call: a module with no kCFI check is not looked at. */
size_t (*volatile len)(const char *) = strlen;

static int counting(const void *a, const void *b)
{
	ncmp++;
	return strcmp(a, b);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	unsigned int x = 12345;

	for (int i = 0; i < N; i++) {
		for (int k = 0; k < 15; k++) {
			x = x * 1103515245u + 12345u;
			words[i][k] = (char)('a' + (x >> 16) % 26);
		}
	}
	if (argc > 2) {		/* count */
		memcpy(work, words, sizeof(work));
		qsort(work, N, sizeof(work[0]), counting);
		printf("%ld\n", ncmp);
		return 0;
	}
	for (long r = 0; r < rounds; r++) {
		memcpy(work, words, sizeof(work));
		qsort(work, N, sizeof(work[0]),
		      (int (*)(const void *, const void *))strcmp);
	}
	printf("%s %zu\n", work[0], len(work[0]));
	return 0;
}
