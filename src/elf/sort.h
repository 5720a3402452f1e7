/* SPDX-License-Identifier: MIT */
/*
 * Sorted arrays (sort.c): the site and symbol tables of an image, and the
 * one stable comparator sort, which is libfineibt.so's qsort
 * (load/alloc.c, through --wrap).
 */
#ifndef FI_SORT_H
#define FI_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int fi_cmp_u64(const void *a, const void *b);
void fi_sort_u64(uint64_t *v, size_t n);
size_t fi_dedup_u64(uint64_t *v, size_t n);
bool fi_bsearch_u64(const uint64_t *v, size_t n, uint64_t key);
/*
 * Stable sort of @n records of @size bytes by the uint64_t each starts
 * with (struct fi_sym, fi_func, a bare uint64_t). Returns 0, or -ENOMEM
 * with the array untouched.
 */
int fi_sort_by_addr(void *v, size_t n, size_t size);
/*
 * Stable sort of @n records of @size bytes at @b by @cmp, as glibc's
 * qsort when it can allocate (a merge sort): records that compare equal
 * keep their order. @tmp: @n * @size bytes of scratch, or NULL for an
 * insertion sort in place (stable as well; for when no scratch can be
 * had). Allocates nothing.
 */
void fi_sort_stable(void *b, size_t n, size_t size,
		    int (*cmp)(const void *, const void *), void *tmp);

#endif /* FI_SORT_H */
