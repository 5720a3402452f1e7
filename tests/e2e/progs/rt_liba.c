// SPDX-License-Identifier: MIT
/* libfi_rta.so: a kCFI library the executable links (tests/e2e/rt_modules.sh). */
#include "rt_mods.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static long mul(long a, long b) { return a * b; }

static fn2_t volatile op = mul;
static fn1_t volatile saved_cb;

long rta_apply(fn1_t f, long x)
{
	return f(x);
}

fn2_t rta_op(void)
{
	return op;
}

void rta_set_cb(fn1_t f)
{
	saved_cb = f;
}

fn1_t rta_get_cb(void)
{
	return saved_cb;
}
