// SPDX-License-Identifier: MIT
/*
 * rt_startup_io's program: a legal call and a confused one through a
 * pointer.
 *   rt_lazy                 in the executable
 *   rt_lazy FILE gone       the same after unlinking FILE (a copy of itself)
 *   rt_lazy lib LIB [gone]  in LIB (rt_lazylib.c, dlopen'ed), optionally
 *                           unlinked (LIB is a copy) before the calls
 */
#include <dlfcn.h>
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

static int in_lib(const char *path, int gone)
{
	void *h = dlopen(path, RTLD_NOW);
	int (*bad)(void);

	if (!h || (gone && unlink(path)))
		return 2;
	bad = (int (*)(void))dlsym(h, "lz_lib_bad");
	return bad ? bad() : 2;
}

int main(int argc, char **argv)
{
	void *volatile p = (void *)lz_two;

	if (argc > 2 && !strcmp(argv[1], "lib"))
		return in_lib(argv[2], argc > 3 && !strcmp(argv[3], "gone"));
	if (argc > 2 && !strcmp(argv[2], "gone") && unlink(argv[1]))
		return 2;
	printf("legal %d\n", lz_call(lz_one, 1));
	fflush(stdout);
	return lz_call((fn1_t)p, 3) == 3 ? 0 : 1;
}
