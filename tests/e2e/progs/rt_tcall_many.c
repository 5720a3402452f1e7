// SPDX-License-Identifier: MIT
/*
 * rt_tcall_many (tests/e2e/rt_index_tcalls.sh): FI_N (1..20) functions
 * that each call through a pointer without a kCFI check, so that the
 * module index lists FI_N thunk calls (or, past its capacity of 16, none
 * and the runtime scans).
 */
#include <stdio.h>

#ifndef FI_N
#define FI_N 3
#endif

typedef int (*fn_t)(int);

static int twice(int x)
{
	return 2 * x;
}

fn_t volatile hook = twice;

#define U(i)								\
	__attribute__((no_sanitize("kcfi"), noinline)) static int u##i(int x) \
	{								\
		return hook(x) + 1;					\
	}
U(0) U(1) U(2) U(3) U(4) U(5) U(6) U(7) U(8) U(9)
U(10) U(11) U(12) U(13) U(14) U(15) U(16) U(17) U(18) U(19)


int main(void)
{
	int sum = hook(1);

	/* Direct calls: only the first FI_N are kept (the rest are dead). */
	if (FI_N > 0) sum += u0(1);
	if (FI_N > 1) sum += u1(1);
	if (FI_N > 2) sum += u2(1);
	if (FI_N > 3) sum += u3(1);
	if (FI_N > 4) sum += u4(1);
	if (FI_N > 5) sum += u5(1);
	if (FI_N > 6) sum += u6(1);
	if (FI_N > 7) sum += u7(1);
	if (FI_N > 8) sum += u8(1);
	if (FI_N > 9) sum += u9(1);
	if (FI_N > 10) sum += u10(1);
	if (FI_N > 11) sum += u11(1);
	if (FI_N > 12) sum += u12(1);
	if (FI_N > 13) sum += u13(1);
	if (FI_N > 14) sum += u14(1);
	if (FI_N > 15) sum += u15(1);
	if (FI_N > 16) sum += u16(1);
	if (FI_N > 17) sum += u17(1);
	if (FI_N > 18) sum += u18(1);
	if (FI_N > 19) sum += u19(1);
	printf("tcalls %d\n", sum);
	return sum != 2 + 3 * FI_N;
}
