// SPDX-License-Identifier: MIT
/*
 * tests/e2e/rt_auto.sh's program, built with fineibt-cc:
 *   rt_auto wait      a legal call through a pointer, "ready 42", then
 *                     wait for a line on stdin (fineibt inspect --pid
 *                     reads the live sites meanwhile)
 *   rt_auto confuse   a type-confused call ("survived N" if it returns)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

typedef long (*fn1_t)(long);

__attribute__((noinline)) long one(long a)
{
	return a + 1;
}

__attribute__((noinline)) long two(long a, long b)
{
	return a + b;
}

int main(int argc, char **argv)
{
	void *volatile other = (void *)two;
	fn1_t volatile same = one;
	char line[8];

	if (argc > 1 && !strcmp(argv[1], "wait")) {
		/* Yama ptrace_scope=1: let the inspector (a sibling) read us. */
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
		printf("ready %ld\n", same(41));
		fflush(stdout);
		return fgets(line, sizeof(line), stdin) ? 0 : 1;
	}
	if (argc > 1 && !strcmp(argv[1], "confuse")) {
		printf("survived %ld\n", ((fn1_t)other)(1));
		return 0;
	}
	fprintf(stderr, "usage: rt_auto wait|confuse\n");
	return 2;
}
