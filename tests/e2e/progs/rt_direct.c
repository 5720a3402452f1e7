// SPDX-License-Identifier: MIT
/*
 * Direct branches into functions with an ENDBR (tests/e2e/rt_direct.sh):
 * calls, tail jumps and self-recursion to external and static functions,
 * of arity 1 (the BHI inline form rewrites func+0) and 2 (a BHI stub),
 * each also reached through a pointer.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int d_one(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int d_two(int x, int y)
{
	return x - y;
}

__attribute__((noinline)) static int d_static(int x)
{
	return x ^ 5;
}

int (*volatile fp1)(int) = d_one;
int (*volatile fp2)(int, int) = d_two;
int (*volatile fps)(int) = d_static;

/* A tail call: jmp rel32. */
__attribute__((noinline)) int d_tail(int x)
{
	return d_two(x, 7);
}

__attribute__((noinline)) int d_rec(int n)
{
	return n <= 1 ? 1 : (n * d_rec(n - 1)) % 1000003;
}

int main(int argc, char **argv)
{
	long sum = 0;
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < n; i++) {
		sum += d_one(i) + d_two(i, 3) + d_static(i) + d_tail(i);
		sum += fp1(i) + fp2(i, 3) + fps(i);
	}
	sum += d_rec(20);
	printf("%ld\n", sum);
	return 0;
}
