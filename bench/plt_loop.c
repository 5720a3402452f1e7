// SPDX-License-Identifier: MIT
/*
 * bench/plt.sh: N rounds of calls into libc through the PLT (built with
 * -fno-builtin so that they stay calls): labs, toupper, strlen, abs.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, acc = 0;
	static const char s[] = "x";

	for (long i = 0; i < n; i++) {
		acc += labs(i - n / 2);
		acc += toupper((int)(i & 0x7f));
		acc += (long)strlen(s + (i & 1));
		acc += abs((int)i);
	}
	printf("%ld\n", acc);
	return 0;
}
