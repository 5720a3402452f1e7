// SPDX-License-Identifier: MIT
/*
 * tests/e2e/rt_inplace.sh static-dl[MODE]: a program linked with
 * -static-fineibt (its runtime starts from its preinit entry) that
 * dlopens LIB, a library naming libfineibt.so. The copy of the runtime
 * that dlopen brings in must find the executable's and defer to it
 * (src/rt/rtone.c), not take itself for the first start and rewrite the
 * executable a second time (its calls then trapped).
 *
 *   rt_static_dl LIB       a call into LIB and one of the executable's,
 *                          both through pointers, after the dlopen:
 *                          prints "static-dl 2"
 *   rt_static_dl LIB bad   the same, then a confused call of the
 *                          executable's (SIGILL where the mode checks)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*fn1_t)(int);

__attribute__((noinline)) int sd_one(int a)
{
	return a + 1;
}

__attribute__((noinline)) long sd_two(long a, long b)
{
	return a + b;
}

__attribute__((noinline)) int sd_call(fn1_t f, int x)
{
	return f(x);
}

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	fn1_t lib = h ? (fn1_t)dlsym(h, "ll_one") : NULL;
	void *volatile p = (void *)sd_two;
	int ok;

	if (!lib) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	ok = sd_call(lib, 1) == 2 && sd_call(sd_one, 2) == 3;
	printf("static-dl %d\n", ok ? 2 : 0);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "bad"))
		return sd_call((fn1_t)p, 3) == 3 ? 0 : 1;
	return !ok;
}
