/* SPDX-License-Identifier: MIT */
/*
 * sortdemo asc|desc: sort a few numbers through libsorter.
 * sortdemo confused: hand libsorter a comparator of another type
 * (int (*)(int, int) cast to sorter_cmp): a CFI failure, reported and
 * fatal (SIGILL) under every mode but off.
 */
#include <stdio.h>
#include <string.h>

#include "sorter.h"

static int by_value(int a, int b)
{
	return a - b;
}

int main(int argc, char **argv)
{
	int v[] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	size_t n = sizeof(v) / sizeof(v[0]);
	const char *what = argc > 1 ? argv[1] : "asc";
	sorter_cmp cmp = sorter_lookup(what);

	if (!strcmp(what, "confused"))
		cmp = (sorter_cmp)(void *)by_value;
	if (!cmp) {
		fprintf(stderr, "usage: sortdemo asc|desc|confused\n");
		return 2;
	}
	sorter_sort(v, n, sizeof(v[0]), cmp);
	for (size_t i = 0; i < n; i++)
		printf("%d%c", v[i], i + 1 < n ? ' ' : '\n');
	return 0;
}
