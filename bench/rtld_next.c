// SPDX-License-Identifier: MIT
/*
 * bench/rtld_next.sh's program. Built twice: with -DNEXT_LIB as a kCFI
 * library whose next_rounds(n) calls dlsym(RTLD_NEXT, "time") n times
 * (the case the module's RTLD_NEXT entry serves: a library loaded by
 * dlopen, docs/compat.md), and without it as the executable that
 * dlopen's that library (argv[1]) and calls next_rounds(argv[2]).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef NEXT_LIB
long next_rounds(long n)
{
	long found = 0;

	for (long i = 0; i < n; i++)
		found += dlsym(RTLD_NEXT, "time") != NULL;
	return found;
}
#else
int main(int argc, char **argv)
{
	long (*rounds)(long);
	void *h;

	if (argc < 3 || !(h = dlopen(argv[1], RTLD_NOW)))
		return 2;
	rounds = (long (*)(long))dlsym(h, "next_rounds");
	if (!rounds)
		return 3;
	return rounds(atol(argv[2])) == atol(argv[2]) ? 0 : 1;
}
#endif
