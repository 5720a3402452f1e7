// SPDX-License-Identifier: MIT
/*
 * rt_tcall (tests/e2e/rt_index_tcalls.sh): one checked call through a
 * pointer and, with -DFI_UNCHECKED, one without a kCFI check, which the
 * compiler still routes through the module's indirect thunk: the call
 * the module index's NO_TCALLS flag is about.
 */
#include <stdio.h>

typedef int (*fn_t)(int);

static int twice(int x)
{
	return 2 * x;
}

fn_t volatile hook = twice;

#ifdef FI_UNCHECKED
__attribute__((no_sanitize("kcfi"), noinline)) static int unchecked(int x)
{
	return hook(x);
}
#else
static int unchecked(int x)
{
	return 2 * x;
}
#endif

int main(void)
{
	int a = hook(3), b = unchecked(4);

	printf("tcall %d %d\n", a, b);
	return !(a == 6 && b == 8);
}
