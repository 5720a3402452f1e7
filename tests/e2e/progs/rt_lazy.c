// SPDX-License-Identifier: MIT
/*
 * rt_startup_io's program: a legal call and a confused one through a
 * pointer. "rt_lazy FILE gone" unlinks FILE (a copy of itself) first, so
 * the report is printed for a module whose file no longer exists.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*fn1_t)(int);

int lz_one(int a)
{
	return a + 1;
}

long lz_two(long a, long b)
{
	return a + b;
}

__attribute__((noinline)) int lz_call(fn1_t f, int x)
{
	return f(x);
}

int main(int argc, char **argv)
{
	void *volatile p = (void *)lz_two;

	if (argc > 2 && !strcmp(argv[2], "gone") && unlink(argv[1]))
		return 2;
	printf("legal %d\n", lz_call(lz_one, 1));
	fflush(stdout);
	return lz_call((fn1_t)p, 3) == 3 ? 0 : 1;
}
