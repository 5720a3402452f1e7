// SPDX-License-Identifier: MIT
/*
 * tests/e2e/compat_stock.sh: a fineibt-cc program that dlopens the stock
 * kCFI library argv[1] and calls it both ways through pointers.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int add(int a, int b) { return a + b; }

int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*sort)(const char **, int);
	int (*call)(int (*)(int, int), int, int);
	long (*confuse)(int (*)(int, int));
	const char *w[] = { "pear", "apple", "fig" };

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	sort = (int (*)(const char **, int))dlsym(h, "stock_sort");
	call = (int (*)(int (*)(int, int), int, int))dlsym(h, "stock_call");
	confuse = (long (*)(int (*)(int, int)))dlsym(h, "stock_confuse");
	printf("sort %d %s call %d\n", sort(w, 3), w[0], call(add, 2, 3));
	if (argc > 2 && !strcmp(argv[2], "confuse"))
		printf("confused %ld\n", confuse(add));
	fflush(stdout);
	return 0;
}
