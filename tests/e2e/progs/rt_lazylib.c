// SPDX-License-Identifier: MIT
/* rt_lazy's library: a confused call made inside it (rt_startup_io.sh). */
#include <stdio.h>

typedef int (*fn1_t)(int);

int ll_one(int a)
{
	return a + 1;
}

long ll_two(long a, long b)
{
	return a + b;
}

__attribute__((noinline)) int ll_call(fn1_t f, int x)
{
	return f(x);
}

int lz_lib_bad(void)
{
	void *volatile p = (void *)ll_two;

	printf("legal %d\n", ll_call(ll_one, 1));
	fflush(stdout);
	return ll_call((fn1_t)p, 3) == 3 ? 0 : 1;
}
