// SPDX-License-Identifier: MIT
/*
 * libstdio.so: a kCFI library tests/e2e/rt_stdio.sh has a fork child
 * dlopen, so that the child's runtime opens its descriptors again.
 */
typedef long (*sl_fn_t)(long);

static long sl_twice(long x)
{
	return 2 * x;
}

sl_fn_t volatile sl_ptr = sl_twice;

long sl_call(long x)
{
	return sl_ptr(x);
}
