// SPDX-License-Identifier: MIT
/*
 * The static runtime's start (fineibt-cc -static-fineibt; libfineibt.a
 * only, pulled in by the driver's -u fi_rt_preinit): an entry in the
 * executable's DT_PREINIT_ARRAY, which the loader runs once every module
 * is relocated and before any constructor, libc's included
 * (docs/runtime.md "Before any constructor"). Without it the runtime
 * started from the executable's crt hook, after the constructors of the
 * libraries it needs: a kCFI library built without fineibt-cc ran its
 * constructors in compiler form.
 *
 * libc is not initialised yet in a dynamically linked program: environ
 * is set to the envp the loader passes (what libc's initialisation
 * assigns moments later), and the CPU model is filled in before use.
 * libfineibt.so starts from src/load/early.c instead.
 */
#include "load.h"

extern char **environ;

void fi_rt_preinit(int argc, char **argv, char **envp)
{
	if (!environ)
		environ = envp;
	fineibt_rt_hook();
}

__attribute__((used, section(".preinit_array")))
static void (*const fi_rt_preinit_entry)(int, char **, char **) = fi_rt_preinit;
