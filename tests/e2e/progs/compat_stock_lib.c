// SPDX-License-Identifier: MIT
/*
 * tests/e2e/compat_stock.sh: a stock kCFI library (clang-22
 * -fsanitize=kcfi alone), dlopen'ed by a fineibt-cc program: it sorts
 * with libc's strcmp through a pointer, calls the program's callback, and
 * with stock_confuse calls it through the wrong type.
 */
#include <stdlib.h>
#include <string.h>

int (*volatile stock_cmp)(const char *, const char *) = strcmp;

static int by_name(const void *a, const void *b)
{
	return stock_cmp(*(const char *const *)a, *(const char *const *)b);
}

int stock_sort(const char **v, int n)
{
	size_t (*volatile len)(const char *) = strlen;

	qsort(v, (size_t)n, sizeof(*v), by_name);
	return (int)len(v[0]);
}

int stock_call(int (*f)(int, int), int a, int b)
{
	return f(a, b);
}

long stock_confuse(int (*f)(int, int))
{
	long (*g)(long) = (long (*)(long))(void *)f;

	return g(3);
}
