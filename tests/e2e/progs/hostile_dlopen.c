// SPDX-License-Identifier: MIT
/*
 * tests/e2e/hostile.sh: dlopen LIB (argv[1]), call its pl_apply(0, 21)
 * through dlsym's pointer, dlopen libm (another module walk), print "ok"
 * if the call returned 42. Built with fineibt-cc.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	long (*apply)(int, long) = h ? (long (*)(int, long))dlsym(h, "pl_apply") : NULL;

	if (!apply) {
		printf("dlopen/dlsym failed: %s\n", dlerror());
		return 2;
	}
	if (apply(0, 21) != 42 || !dlopen("libm.so.6", RTLD_NOW)) {
		printf("call failed\n");
		return 2;
	}
	printf("ok\n");
	return 0;
}
