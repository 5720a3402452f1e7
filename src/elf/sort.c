/* SPDX-License-Identifier: MIT */
/*
 * The sorted arrays of an image (sort.h): the site and symbol tables
 * the reader (elf.c), site discovery (elf_sites.c) and the memory-only
 * reader (imgindex.c) sort, deduplicate and search; and the one
 * comparator sort, which libfineibt.so's qsort is (load/alloc.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sort.h"

int fi_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t fi_rec_key(const uint8_t *rec)
{
	uint64_t k;

	memcpy(&k, rec, sizeof(k));
	return k;
}

/* Fixed sizes, so that the compiler inlines the copies of the hot loop. */
static void fi_rec_copy(uint8_t *dst, const uint8_t *src, size_t size)
{
	switch (size) {
	case 8:		memcpy(dst, src, 8); break;
	case 16:	memcpy(dst, src, 16); break;
	case 24:	memcpy(dst, src, 24); break;
	default:	memcpy(dst, src, size); break;
	}
}

#define FI_RADIX_BITS	11

/*
 * One counting pass on @bits bits of the keys from @shift, @src to @dst;
 * @at: 1 << FI_RADIX_BITS counters (16 KiB: on the heap, since this may
 * run in a dlopen on a thread with a 16 KiB stack).
 */
static void fi_radix_pass(const uint8_t *src, uint8_t *dst, size_t n,
			  size_t size, unsigned int shift, unsigned int bits,
			  size_t *at)
{
	const uint64_t mask = (1ull << bits) - 1;
	size_t sum = 0;

	memset(at, 0, (mask + 1) * sizeof(*at));

	for (size_t i = 0; i < n; i++)
		at[(fi_rec_key(src + i * size) >> shift) & mask]++;
	for (size_t d = 0; d <= mask; d++) {
		size_t c = at[d];

		at[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++) {
		size_t d = (fi_rec_key(src + i * size) >> shift) & mask;

		fi_rec_copy(dst + at[d]++ * size, src + i * size, size);
	}
}

/*
 * The one merge: from the fronts of the sorted runs [*@l, @le) and
 * [*@r, @re) into @dst, stable (a tie takes the left record), until one
 * run is used up; returns the end of what it wrote, *@l and *@r moved
 * past what it took. By @cmp, or (NULL, inlined) by the uint64_t each
 * record starts with.
 */
static inline __attribute__((always_inline)) uint8_t *
fi_merge_front(uint8_t *dst, const uint8_t **l, const uint8_t *le,
	       const uint8_t **r, const uint8_t *re, size_t size,
	       int (*cmp)(const void *, const void *))
{
	const uint8_t *a = *l, *b = *r;

	while (a < le && b < re) {
		if (cmp ? cmp(a, b) <= 0 : fi_rec_key(a) <= fi_rec_key(b)) {
			fi_rec_copy(dst, a, size);
			a += size;
		} else {
			fi_rec_copy(dst, b, size);
			b += size;
		}
		dst += size;
	}
	*l = a;
	*r = b;
	return dst;
}

/* Stable merge of the sorted runs [0, mid) and [mid, n) of @src into @dst. */
static void fi_merge(const uint8_t *src, size_t mid, size_t n, uint8_t *dst,
		     size_t size)
{
	const uint8_t *l = src, *r = src + mid * size;
	const uint8_t *le = r, *re = src + n * size;

	dst = fi_merge_front(dst, &l, le, &r, re, size, NULL);
	memcpy(dst, l, (size_t)(le - l));
	memcpy(dst + (le - l), r, (size_t)(re - r));
}

#define FI_MAX_RUNS	64

/*
 * Symbol tables are mostly a few ascending runs (one per input file, or
 * locals then globals): merge neighbouring runs until one is left, each
 * round a sequential pass. @run holds the @nrun + 1 run boundaries.
 */
static void fi_merge_runs(uint8_t *a, uint8_t *tmp, size_t size,
			  size_t *run, size_t nrun)
{
	uint8_t *src = a, *dst = tmp;

	while (nrun > 1) {
		size_t out = 0;

		for (size_t r = 0; r < nrun; r += 2) {
			size_t lo = run[r], mid = run[r + 1];
			size_t hi = r + 2 <= nrun ? run[r + 2] : mid;

			fi_merge(src + lo * size, mid - lo, hi - lo,
				 dst + lo * size, size);
			run[out++] = lo;
		}
		run[out] = run[nrun];
		nrun = out;
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, run[1] * size);
}

/*
 * LSD radix sort over the bits in which the keys differ (@diff: addresses
 * share their high bits and, aligned, their low ones), in as few passes
 * of at most FI_RADIX_BITS bits as they need.
 */
static void fi_radix_sort(uint8_t *a, uint8_t *tmp, size_t n, size_t size,
			  uint64_t diff, size_t *at)
{
	unsigned int lo = (unsigned int)__builtin_ctzll(diff);
	unsigned int width = 64 - (unsigned int)__builtin_clzll(diff) - lo;
	unsigned int passes = (width + FI_RADIX_BITS - 1) / FI_RADIX_BITS;
	unsigned int bits = (width + passes - 1) / passes;
	uint8_t *src = a, *dst = tmp;

	for (unsigned int p = 0; p < passes; p++) {
		fi_radix_pass(src, dst, n, size, lo + p * bits,
			      p == passes - 1 ? width - p * bits : bits, at);
		dst = src;
		src = src == a ? tmp : a;
	}
	if (src != a)
		memcpy(a, src, n * size);
}

/*
 * A few ascending runs are merged, many are radix-sorted: either way a
 * large program's symbols sort in a few linear passes instead of the
 * n log n comparator calls of qsort, which were the largest cost of
 * reading such a file.
 */
int fi_sort_by_addr(void *v, size_t n, size_t size)
{
	uint64_t any = 0, all = ~0ull;
	size_t run[FI_MAX_RUNS + 1], nrun = 1;
	uint8_t *a = v, *tmp;

	run[0] = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = fi_rec_key(a + i * size);

		if (i && fi_rec_key(a + (i - 1) * size) > k) {
			if (nrun < FI_MAX_RUNS)
				run[nrun] = i;
			nrun++;
		}
		any |= k;
		all &= k;
	}
	if (nrun == 1)
		return 0;
	if (n > SIZE_MAX / size || !(tmp = malloc(n * size)))
		return -ENOMEM;
	if (nrun <= FI_MAX_RUNS) {
		run[nrun] = n;
		fi_merge_runs(a, tmp, size, run, nrun);
	} else {
		size_t *at = malloc(sizeof(*at) << FI_RADIX_BITS);

		if (!at) {
			free(tmp);
			return -ENOMEM;
		}
		fi_radix_sort(a, tmp, n, size, any ^ all, at);
		free(at);
	}
	free(tmp);
	return 0;
}

/* Top-down merge sort of [b, b + n * size) through @tmp (as large). */
static void fi_msort(uint8_t *b, size_t n, size_t size,
		     int (*cmp)(const void *, const void *), uint8_t *tmp)
{
	const uint8_t *l = b, *le, *r;
	size_t h = n / 2;
	uint8_t *o;

	if (n < 2)
		return;
	fi_msort(b, h, size, cmp, tmp);
	fi_msort(b + h * size, n - h, size, cmp, tmp);
	le = r = b + h * size;
	o = fi_merge_front(tmp, &l, le, &r, b + n * size, size, cmp);
	/* What is left of the right half is in place already. */
	memcpy(o, l, (size_t)(le - l));
	o += le - l;
	memcpy(b, tmp, (size_t)(o - tmp));
}

void fi_sort_stable(void *b, size_t n, size_t size,
		    int (*cmp)(const void *, const void *), void *tmp)
{
	uint8_t *a = b;

	if (n < 2 || !size)
		return;
	if (tmp) {
		fi_msort(a, n, size, cmp, tmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		for (size_t k = i; k && cmp(a + (k - 1) * size, a + k * size) > 0; k--) {
			uint8_t *x = a + (k - 1) * size;

			for (size_t j = 0; j < size; j++) {
				uint8_t t = x[j];

				x[j] = x[size + j];
				x[size + j] = t;
			}
		}
	}
}

/* Metadata is usually emitted in address order: check before sorting. */
void fi_sort_u64(uint64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (v[i - 1] > v[i]) {
			if (fi_sort_by_addr(v, n, sizeof(*v)))
				qsort(v, n, sizeof(*v), fi_cmp_u64);
			return;
		}
	}
}

size_t fi_dedup_u64(uint64_t *v, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (!out || v[out - 1] != v[i])
			v[out++] = v[i];
	}
	return out;
}

bool fi_bsearch_u64(const uint64_t *v, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] == key)
			return true;
		if (v[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}
