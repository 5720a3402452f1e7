// SPDX-License-Identifier: MIT
/*
 * tests/e2e/rt_dlopen_threads.sh's library, built twice (DLTHR_FN=fa, fb).
 * Its function is called through a pointer from the executable (a check
 * against the hash the runtime gave it), and calls strlen through a
 * pointer dlsym returned (a foreign veneer); its GOT has a dlsym slot,
 * which the runtime binds to its interposer.
 */
#include <dlfcn.h>
#include <stddef.h>

typedef size_t (*dlthr_len_fn)(const char *);

static int twice(int x)
{
	return 2 * x;
}

int (*volatile dlthr_op)(int) = twice;

long DLTHR_FN(const char *s)
{
	dlthr_len_fn f = (dlthr_len_fn)dlsym(RTLD_DEFAULT, "strlen");

	return f ? (long)f(s) + dlthr_op(1) : -1;
}
