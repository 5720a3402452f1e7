// SPDX-License-Identifier: MIT
/*
 * libpatchmode.so (tests/e2e/protect_patchmode.sh), patched statically
 * into several modes: its constructor calls the program's
 * long pm_victim(long) through a pointer of another type.
 */
#include <dlfcn.h>
#include <stdio.h>

typedef long (*pm_fnp_t)(const char *, long);

__attribute__((constructor)) static void pm_ctor(void)
{
	pm_fnp_t f = (pm_fnp_t)dlsym(RTLD_DEFAULT, "pm_victim");

	if (f)
		printf("confused call ran on: %ld\n", f("confused", 5));
	fflush(stdout);
}
