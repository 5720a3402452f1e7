// SPDX-License-Identifier: MIT
/*
 * protect_dlsym_thunk NAME (tests/e2e/protect_dlsym_thunk.sh): the
 * program asks dlsym for NAME (a name from its input, as a plug-in host
 * or an FFI would) and calls the pointer as long (*)(long), with rax
 * holding the address of pwned, a function of another type. NAME an
 * indirect-branch thunk (`jmp *%rax`): were the pointer a dlsym veneer,
 * every check would accept the call and the thunk would jump to any
 * address the caller's rax holds.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void pwned(void)
{
	puts("PWNED: the thunk jumped to rax");
	fflush(stdout);
	exit(7);
}

static void (*volatile target)(void) = pwned;

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "__x86_indirect_thunk_rax";
	long (*f)(long) = (long (*)(long))dlsym(RTLD_DEFAULT, name);
	long r;

	if (!f) {
		puts("no such symbol");
		return 2;
	}
	/* rax at the call: what the thunk would jump to. */
	register void (*rax)(void) __asm__("rax") = target;
	__asm__ volatile("" : : "r"(rax));
	r = f(5);
	printf("returned %ld\n", r);
	return 0;
}
