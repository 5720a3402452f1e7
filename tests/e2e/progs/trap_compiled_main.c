// SPDX-License-Identifier: MIT
/*
 * tests/e2e/trap_compiled.sh: the program installs a SIGILL handler that
 * steps over the ud2 it faulted on, then makes the kCFI-alone library
 * call a function of the wrong type. If the CFI trap reached that handler
 * the call would go through ("wrong type reached"); it must be the
 * runtime's: reported, fatal unless warn or off.
 *
 * argv[1] "call": the confused call; "trap": a plain ud2 in the library
 * (no CFI check: the program's handler gets it, prints "handled");
 * "calls N": the confused call N times (warn: counted after the first,
 * docs/traps.md "Repeated failures"), prints "calls N".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

int tc_call(void *p);
void tc_trap(void);

static volatile int handled;

static void step_over(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	handled++;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static long wrong(long a, long b)
{
	printf("wrong type reached\n");
	return a + b;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = step_over, .sa_flags = SA_SIGINFO };

	setvbuf(stdout, NULL, _IONBF, 0);
	sigaction(SIGILL, &sa, NULL);
	if (argc > 1 && !strcmp(argv[1], "trap")) {
		tc_trap();
		printf("handled %d\n", handled);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "calls")) {
		int n = atoi(argv[2]), i;

		for (i = 0; i < n; i++)
			tc_call((void *)wrong);
		printf("calls %d\n", i);
		return 0;
	}
	printf("call %d\n", tc_call((void *)wrong));
	return 0;
}
