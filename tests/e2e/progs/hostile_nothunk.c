// SPDX-License-Identifier: MIT
/*
 * tests/e2e/hostile.sh: built by stock clang-22 with -fsanitize=kcfi and
 * patchable entries but without the thunk flags, so its checked calls go
 * through any register (`call *%rax`) and none is a site the runtime
 * rewrites. Its calls to its own functions must keep working under
 * `fineibt run`: prints 70.
 */
#include <stdio.h>

__attribute__((noinline)) static int twice(int x)
{
	return 2 * x;
}

__attribute__((noinline)) static int plus1(int x)
{
	return x + 1;
}

int (*volatile fp[2])(int) = { twice, plus1 };

int main(void)
{
	int s = 0;

	for (int i = 0; i < 10; i++)
		s += fp[i & 1](i);
	printf("%d\n", s);
	return 0;
}
