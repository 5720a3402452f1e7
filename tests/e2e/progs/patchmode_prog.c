// SPDX-License-Identifier: MIT
/*
 * patchmode_prog LIB (tests/e2e/protect_patchmode.sh): dlopen LIB after
 * start-up; its constructor calls pm_victim with the wrong type.
 */
#include <dlfcn.h>
#include <stdio.h>

__attribute__((noinline)) long pm_victim(long x)
{
	return 2 * x;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "dlopen: %s\n", argc < 2 ? "no LIB" : dlerror());
		return 2;
	}
	printf("loaded\n");
	return 0;
}
