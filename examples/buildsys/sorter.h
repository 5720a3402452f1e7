/* SPDX-License-Identifier: MIT */
/* libsorter: a tiny shared library that calls back through pointers. */
#ifndef SORTER_H
#define SORTER_H

#include <stddef.h>

typedef int (*sorter_cmp)(const void *a, const void *b);

/* Insertion sort of @n elements of @size bytes, ordered by @cmp. */
void sorter_sort(void *base, size_t n, size_t size, sorter_cmp cmp);

/* A comparator by name ("asc", "desc"), or NULL. */
sorter_cmp sorter_lookup(const char *name);

#endif
