/* SPDX-License-Identifier: MIT */
/*
 * The program `fineibt demo` attacks. Built with fineibt-cc; the runtime
 * rewrites it into the mode of FINEIBT_CFI before main. Each attack plays
 * an attacker who has corrupted one function pointer and knows the mode
 * (as an attacker who has read the binary would):
 *
 *   confusion   a pointer to twice(int) used where int (*)(int, int) is called
 *   tailcall    the same through a tail call (the cs jmp form of a call site)
 *   pivot       a pointer aimed at a "naked" ENDBR: gadget() starts with
 *               endbr64 and has no hash check, like the SYSCALL entry of the
 *               2025 kernel bypass. Under FineIBT the caller jumps to
 *               target-16, so the attacker adds 16.
 *
 * Prints "ATTACK SUCCEEDED: ..." when the corrupted call ran.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fineibt.h"

typedef int (*binary_fn)(int, int);

int gadget(int);		/* attack_gadget.S: endbr64, no preamble */

__attribute__((noinline)) int twice(int x)
{
	return 2 * x;
}

__attribute__((noinline)) int add(int a, int b)
{
	return a + b;
}

/* The corrupted slot: the compiler cannot see what lands in it. */
static void *volatile slot;

__attribute__((noinline)) static int call_it(int a, int b)
{
	binary_fn f = (binary_fn)slot;

	return f(a, b) + 1;	/* not a tail call */
}

__attribute__((noinline)) int tail_it(int a, int b)
{
	binary_fn f = (binary_fn)slot;

	return f(a, b);		/* compiled as a tail call: cs jmp */
}

static int legal(void)
{
	slot = (void *)add;
	return call_it(2, 3) == 6 && tail_it(2, 3) == 5;
}

int main(int argc, char **argv)
{
	const char *attack = argc > 1 ? argv[1] : "";
	struct fineibt_config cfg;
	int r;

	if (!legal()) {
		printf("legal calls broken\n");
		return 2;
	}
	fineibt_get_config(&cfg);
	if (!strcmp(attack, "confusion")) {
		slot = (void *)twice;
		r = call_it(20, 1);
		printf("ATTACK SUCCEEDED: twice() called as a two-argument function, result %d\n", r);
	} else if (!strcmp(attack, "tailcall")) {
		slot = (void *)twice;
		r = tail_it(20, 1);
		printf("ATTACK SUCCEEDED: tail call into twice(), result %d\n", r);
	} else if (!strcmp(attack, "pivot")) {
		uintptr_t p = (uintptr_t)gadget;

		if (cfg.mode == FINEIBT_MODE_FINEIBT)
			p += 16;	/* the FineIBT caller subtracts 16 */
		slot = (void *)p;
		r = call_it(0, 0);
		printf("ATTACK SUCCEEDED: pivoted onto a naked ENDBR, result %d\n", r);
	} else {
		printf("usage: %s confusion|tailcall|pivot\n", argv[0]);
		return 2;
	}
	return 0;
}
