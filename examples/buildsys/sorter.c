/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sorter.h"

static int cmp_asc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int cmp_desc(const void *a, const void *b)
{
	return cmp_asc(b, a);
}

sorter_cmp sorter_lookup(const char *name)
{
	static const struct {
		const char *name;
		sorter_cmp fn;
	} table[] = { { "asc", cmp_asc }, { "desc", cmp_desc } };

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strcmp(name, table[i].name))
			return table[i].fn;
	}
	return NULL;
}

void sorter_sort(void *base, size_t n, size_t size, sorter_cmp cmp)
{
	char *p = base, tmp[64];

	if (size > sizeof(tmp))
		return;
	for (size_t i = 1; i < n; i++) {
		size_t j = i;

		memcpy(tmp, p + i * size, size);
		/* The indirect call that kCFI/FineIBT checks. */
		while (j > 0 && cmp(p + (j - 1) * size, tmp) > 0) {
			memcpy(p + j * size, p + (j - 1) * size, size);
			j--;
		}
		memcpy(p + j * size, tmp, size);
	}
}
