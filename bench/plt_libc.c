// SPDX-License-Identifier: MIT
/*
 * bench/plt.sh: N rounds of strdup + free. strdup calls strlen and memcpy
 * through libc's own PLT (IFUNC slots, made direct by the runtime); the
 * program's calls go through its full-RELRO GOT (fineibt-cc's default).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, acc = 0;
	static const char s[] = "a string of some length";

	for (long i = 0; i < n; i++) {
		char *d = strdup(s + (i & 7));

		acc += d[0];
		free(d);
	}
	printf("%ld\n", acc);
	return 0;
}
