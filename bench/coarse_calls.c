// SPDX-License-Identifier: MIT
/*
 * bench/coarse_calls.sh: N calls through a pointer to a two-argument
 * function, either typed (kCFI-checked) or unprototyped (`int (*)()`,
 * no kCFI check: the thunk's coarse check when built by fineibt-cc).
 *   coarse_calls typed|unproto N
 */
#include <stdlib.h>
#include <string.h>

typedef int Function ();
typedef int (*typed_fn)(int, int);

__attribute__((noinline)) static int add(int a, int b)
{
	return a + b;
}

typed_fn volatile typed = add;
Function *volatile unproto = (Function *)add;

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000;
	int acc = 0;

	if (argc > 1 && !strcmp(argv[1], "unproto")) {
		for (long i = 0; i < n; i++)
			acc += unproto(acc, 1);
	} else {
		for (long i = 0; i < n; i++)
			acc += typed(acc, 1);
	}
	return acc == -1;
}
