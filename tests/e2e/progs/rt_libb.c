// SPDX-License-Identifier: MIT
/*
 * libfi_rtb.so: a kCFI library the executable dlopen's
 * (tests/e2e/rt_modules.sh, rt_threads.sh). Its constructor calls the
 * executable's callback through a pointer: with randomised hashes that
 * call only passes if this library was rewritten before its constructors
 * ran.
 */
#include <stdlib.h>

#include "rt_mods.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static long twice(long x) { return 2 * x; }

static fn1_t volatile fnb = twice;
static long ctor_value = -1;

/* RTB_CTOR_CONFUSE set (rt_driver.sh): the constructor calls the
 * callback through another type, to be caught there. */
__attribute__((constructor)) static void rtb_ctor(void)
{
	fn1_t cb = rta_get_cb();

	if (cb && getenv("RTB_CTOR_CONFUSE"))
		ctor_value = ((fn2_t)(void *)cb)(5, 6);
	else if (cb)
		ctor_value = cb(5);
}

long rtb_apply2(fn2_t f, long a, long b)
{
	return f(a, b);
}

fn1_t rtb_fn(void)
{
	return fnb;
}

long rtb_ctor_value(void)
{
	return ctor_value;
}
