// SPDX-License-Identifier: MIT
/*
 * libfi_warn.so: tests/e2e/protect_warnlib.sh patches it statically with
 * `fineibt patch --cfi=...,warn` (docs/protection.md). Its constructor
 * makes a type-confused call inside the library, so no call crosses
 * modules (whose hashes could differ from the process's anyway): prints
 * "survived ctor" if the call returns.
 */
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

typedef long (*wl_fn1_t)(long);
typedef long (*wl_fnp_t)(const char *, long);

NOINLINE static long twice(long x) { return 2 * x; }

static wl_fn1_t volatile op = twice;

__attribute__((constructor)) static void wl_ctor(void)
{
	static const char msg[] = "survived ctor\n";
	wl_fnp_t f = (wl_fnp_t)(void *)op;

	f("confused", 1);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(4);
}

long wl_twice(long x)
{
	return op(x);
}
