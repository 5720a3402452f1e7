// SPDX-License-Identifier: MIT
/*
 * libfi_one.so: the kCFI library tests/e2e/protect_dlmopen.sh loads into a
 * link-map namespace of its own (dlmopen), so that it brings a second
 * copy of the runtime with it.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fineibt.h"

#define NOINLINE __attribute__((noinline))

typedef long (*ol_fn1_t)(long);
typedef long (*ol_fnp_t)(const char *, long);

NOINLINE static long twice(long x) { return 2 * x; }
NOINLINE static long add1(long x) { return x + 1; }

static ol_fn1_t volatile ops[2] = { twice, add1 };

/* Legal: an indirect call inside the library. Returns 42 for (0, 21). */
long ol_apply(int i, long x)
{
	return ops[i & 1](x);
}

/* Confused: twice called as a function of another type. */
long ol_confused(long x)
{
	ol_fnp_t f = (ol_fnp_t)(void *)ops[0];

	return f("confused", x);
}

static void ol_handler(int sig)
{
	static const char msg[] = "namespace handler\n";

	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

/* Not a CFI check: a plain ud2 in a registered module's rewritten text. */
void ol_trap(void)
{
	__builtin_trap();
}

/* A SIGILL handler of the namespace's own, through its libc. */
int ol_install(void)
{
	struct sigaction sa = { .sa_handler = ol_handler };

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGILL, &sa, NULL);
}

/* The namespace's view of the mode (its copy of the library's API). */
int ol_config(struct fineibt_config *cfg)
{
	return fineibt_get_config(cfg);
}

/* A sealed JIT region registered through the namespace's copy, or NULL. */
void *ol_jit(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xcc, 4096);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) ||
	    fineibt_jit_register(p, 4096))
		return NULL;
	return p;
}

/*
 * A library loaded from inside the namespace after it started (its copy
 * of the runtime hands it to the process's runtime too): its confused
 * call, or 0 if it could not be loaded.
 */
long ol_load_confused(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	long (*f)(long) = h ? (long (*)(long))dlsym(h, "ol_confused") : NULL;

	return f ? f(1) : 0;
}
