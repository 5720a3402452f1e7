// SPDX-License-Identifier: MIT
/*
 * tests/e2e/compat_san.sh: one program per sanitizer, built with
 * fineibt-cc -fsanitize=...; argv[1] picks what goes wrong:
 *   (none)    nothing: exit 0 with a heap block reachable from a global
 *   leak      an unreachable block (LeakSanitizer)
 *   overflow  a heap write one past the end (AddressSanitizer)
 *   ubsan     a signed overflow (UndefinedBehaviorSanitizer)
 *   race      two threads write one int (ThreadSanitizer)
 *   uninit    a branch on uninitialised heap memory (MemorySanitizer)
 *   confused  an indirect call through a pointer of the wrong type
 *             (the CFI check: a report, then SIGILL or, with warn, 22)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add1(int x) { return x + 1; }
static int add1_long(long x) { return (int)x + 1; }
static void *kept;
static int shared;

static void *bump(void *arg)
{
	shared++;
	return arg;
}

int main(int argc, char **argv)
{
	int (*volatile f)(int) = add1;
	const char *what = argc > 1 ? argv[1] : "";
	char *p = malloc(16);
	pthread_t t[2];

	kept = malloc(32);
	if (!strcmp(what, "leak")) {
		char *lost = malloc(100);

		lost[0] = 1;
		lost = NULL;
	} else if (!strcmp(what, "overflow")) {
		p[16] = 1;
	} else if (!strcmp(what, "ubsan")) {
		volatile int big = 0x7fffffff;

		printf("%d\n", big + argc);
	} else if (!strcmp(what, "race")) {
		pthread_create(&t[0], NULL, bump, NULL);
		pthread_create(&t[1], NULL, bump, NULL);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
	} else if (!strcmp(what, "uninit")) {
		int *u = malloc(sizeof(*u));

		if (*u == 42)
			puts("42");
		free(u);
	} else if (!strcmp(what, "confused")) {
		f = (int (*)(int))(void *)add1_long;
	}
	printf("%d\n", f(21));
	free(p);
	return 0;
}
