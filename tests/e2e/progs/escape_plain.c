// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_escape.sh `forged`: an uninstrumented library (plain
 * clang, no kCFI) with an exported function and a 16-aligned instruction
 * inside another one (an assembler-local label: no symbol at it), and
 * their raw addresses (dlsym would give a kCFI caller a veneer), and
 * libc's labs (`dlsymforged`: an address inside another object).
 */
#include <stdlib.h>

__attribute__((noinline)) long plain_entry(void)
{
	return 5;
}

__attribute__((noinline)) long plain_body(void)
{
	__asm__ volatile(".balign 16, 0x90\n.Lplain_mid:\n\tnop");
	return 7;
}

void *plain_entry_addr(void)
{
	return (void *)plain_entry;
}

void *plain_mid_addr(void)
{
	void *p;

	__asm__("lea .Lplain_mid(%%rip), %0" : "=r"(p));
	return p;
}

void *plain_labs_addr(void)
{
	return (void *)labs;
}
