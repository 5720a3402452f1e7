// SPDX-License-Identifier: MIT
/*
 * tests/e2e/compat_stock.sh: built by clang-22 with -fsanitize=kcfi alone
 * (a stock kCFI program). Calls libc through pointers (strlen, strcmp,
 * strcmp handed to qsort and called by libc), a table of its own
 * callbacks, and with "confuse" a callback through the wrong type, with
 * "veneer" strlen through the wrong type.
 * "same" prints whether its &strcmp equals libc's (dlsym): docs/compat.md.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

int (*volatile table[])(int, int) = { add, sub, mul };
int (*volatile cmp)(const char *, const char *) = strcmp;
size_t (*volatile len)(const char *) = strlen;

static int by_name(const void *a, const void *b)
{
	return cmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
	const char *w[] = { "pear", "apple", "fig", "kiwi" };
	char fixed[4][8] = { "pear", "apple", "fig", "kiwi" };
	const char *what = argc > 1 ? argv[1] : "";
	long sum = 0;

	for (int r = 0; r < 100; r++)
		for (int i = 0; i < 3; i++)
			sum += table[i](7, 3);
	sum += (long)len("fineibt") + cmp("a", "a");
	qsort(w, 4, sizeof(w[0]), by_name);
	/* libc calls strcmp through the pointer this module took */
	qsort(fixed, 4, sizeof(fixed[0]),
	      (int (*)(const void *, const void *))strcmp);
	printf("sum %ld first %s %s\n", sum, w[0], fixed[0]);
	if (!strcmp(what, "same"))
		printf("same %d\n", (void *)cmp == dlsym(RTLD_DEFAULT, "strcmp"));
	if (!strcmp(what, "veneer")) {
		/* strlen's typed veneer through another type */
		int (*bad)(int) = (int (*)(int))(void *)len;

		printf("veneer %d\n", bad(3) != 0);
	}
	if (!strcmp(what, "confuse")) {
		long (*bad)(long) = (long (*)(long))(void *)table[0];

		printf("confused %ld\n", bad(5));
	}
	fflush(stdout);
	return 0;
}
