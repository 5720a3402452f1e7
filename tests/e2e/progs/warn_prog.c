// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_warnlib.sh: warn_prog LIB dlopens LIB after start-up
 * ("loaded" if it returns); warn_prog with no argument is the program
 * linked against the library (its constructor ran before main).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc > 1 && !dlopen(argv[1], RTLD_NOW)) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	printf("loaded\n");
	return 0;
}
