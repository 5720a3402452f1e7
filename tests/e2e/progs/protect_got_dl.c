// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_got.sh: dlopen the library argv[1] (protect_got.c
 * built with -DPG_LIB, linked lazily) after start-up and run its attack on
 * its own GOT: the runtime makes its PLT direct when the dlopen returns.
 * argv[2] "lazy": RTLD_LAZY (its puts slot is then not bound yet).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int mode = argc > 2 && !strcmp(argv[2], "lazy") ? RTLD_LAZY : RTLD_NOW;
	void *h = argc > 1 ? dlopen(argv[1], mode) : NULL;
	int (*attack)(void);

	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 2;
	}
	attack = (int (*)(void))dlsym(h, "pg_attack");
	return attack ? attack() : 3;
}
