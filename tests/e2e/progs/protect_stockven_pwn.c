// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_stockven.sh: an uninstrumented library (plain clang,
 * no kCFI) with the function the attacker wants called, and its raw
 * address (dlsym would give a kCFI caller a veneer of it).
 */
#include <stdio.h>

int pwn_cmp(const char *a, const char *b)
{
	(void)a;
	(void)b;
	puts("PWNED");
	return 0;
}

void *pwn_addr(void)
{
	return (void *)pwn_cmp;
}
