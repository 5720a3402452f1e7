// SPDX-License-Identifier: MIT
/*
 * The shared runtime's memory during its early start (early.c): from
 * mappings of its own, not from libc's malloc.
 *
 * The early start runs while the loader relocates libfineibt.so, and the
 * loader fills in the main thread's TLS block only after it relocated
 * every module. A first malloc there sets up libc's allocator for the
 * thread in that block (its arena and tcache pointers); the loader then
 * copies the TLS initialisation image over them, and the program's next
 * malloc finds the thread without an arena and makes a new one: a 128
 * MiB reservation, grown by mprotect, holding the program's heap for its
 * whole life instead of the main arena. (Seen without fineibt too: any
 * IFUNC resolver of a library that calls malloc does it.)
 *
 * So libfineibt.so is linked with --wrap for malloc, calloc, realloc,
 * free, strdup, malloc_trim and qsort (glibc's qsort mallocs its merge
 * buffer; Makefile): every such call of the runtime comes here. Outside
 * the early start malloc, calloc, realloc and free go to libc unchanged,
 * strdup is that malloc and a copy, sorting is a merge sort of our own
 * (also during it) and malloc_trim is libc's, looked up when first
 * called: three imports fewer for the loader to bind at every start.
 * During the early start blocks come from private anonymous pools (bump
 * pointers, small blocks apart from large ones). A
 * block is told apart by its address at free/realloc, at any time later:
 * the runtime keeps some early blocks for the process's life. Freeing a
 * large block gives its whole pages back at once (madvise), and a pool
 * whose blocks are all freed is unmapped, so memory ends as malloc_trim
 * would leave it.
 *
 * libfineibt.so only: the static runtime starts from DT_PREINIT_ARRAY,
 * after the TLS block is set up (preinit.c). Libc's functions that
 * allocate internally (fopen...) are not covered; the early start calls
 * none (the dlmopen check that would, rtone.c, runs only after another
 * runtime took SIGILL, never in the base namespace's first start).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "load.h"
#include "sort.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

#define FI_POOLS	64
#define FI_POOL_MIN	(4u << 20)	/* reserved, touched only as used */
#define FI_ALIGN	16
#define FI_HDR		16		/* the block's size, kept aligned */
#define FI_PAGE		4096ul
#define FI_SMALL	1024		/* smaller blocks: their own pool */

struct fi_pool {
	uintptr_t lo, hi;	/* 0, 0 once unmapped */
	uintptr_t used;		/* bump pointer */
	long live;		/* blocks not freed yet */
};

static struct fi_pool fi_pools[FI_POOLS];
static unsigned int fi_npools;
static bool fi_alloc_on;
/*
 * The pools being bumped: small blocks apart from large ones. What the
 * runtime keeps after its start (module records, names) is small, and
 * so packs into a few pages instead of pinning one page between each two
 * freed discovery arrays.
 */
static struct fi_pool *fi_cur[2];

void fi_alloc_private_begin(void)
{
	fi_alloc_on = true;
}

static void fi_pool_drop(struct fi_pool *p)
{
	uintptr_t lo = p->lo, hi = p->hi;

	__atomic_store_n(&p->lo, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->hi, 0, __ATOMIC_RELAXED);
	munmap((void *)lo, hi - lo);
}

void fi_alloc_private_end(void)
{
	fi_alloc_on = false;
	fi_cur[0] = fi_cur[1] = NULL;
	/* The current pools were kept for more bumps; they are done now. */
	for (unsigned int i = 0; i < fi_npools; i++) {
		if (fi_pools[i].lo && !__atomic_load_n(&fi_pools[i].live,
							__ATOMIC_ACQUIRE))
			fi_pool_drop(&fi_pools[i]);
	}
}

static struct fi_pool *fi_pool_of(const void *ptr)
{
	uintptr_t a = (uintptr_t)ptr;

	for (unsigned int i = 0; i < fi_npools; i++) {
		struct fi_pool *p = &fi_pools[i];

		if (a >= __atomic_load_n(&p->lo, __ATOMIC_RELAXED) &&
		    a < __atomic_load_n(&p->hi, __ATOMIC_RELAXED))
			return p;
	}
	return NULL;
}

static struct fi_pool *fi_pool_new(size_t need)
{
	size_t size = need > FI_POOL_MIN ? (need + FI_PAGE - 1) & ~(FI_PAGE - 1) :
					   FI_POOL_MIN;
	struct fi_pool *p;
	void *m;

	if (fi_npools == FI_POOLS)
		return NULL;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = &fi_pools[fi_npools++];
	p->lo = (uintptr_t)m;
	p->hi = p->lo + size;
	p->used = p->lo;
	p->live = 0;
	return p;
}

/* A zeroed block of @n bytes: pool memory is fresh and never reused. */
static void *fi_private_alloc(size_t n)
{
	struct fi_pool **cur = &fi_cur[n >= FI_SMALL], *p = *cur;
	size_t need;

	if (n > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	need = FI_HDR + ((n + FI_ALIGN - 1) & ~(size_t)(FI_ALIGN - 1));
	if (!p || !p->lo || p->hi - p->used < need) {
		/* A pool nothing lives in any more is not needed. */
		if (p && p->lo && !p->live)
			fi_pool_drop(p);
		p = *cur = fi_pool_new(need);
		if (!p) {
			errno = ENOMEM;
			return NULL;
		}
	}
	*(size_t *)p->used = n;
	p->used += need;
	p->live++;
	return (void *)(p->used - need + FI_HDR);
}

static size_t fi_private_size(const void *ptr)
{
	return *(const size_t *)((uintptr_t)ptr - FI_HDR);
}

/* Free @ptr of pool @p: its whole pages go back now, the pool with its
 * last block (unless the early start still bumps in it). */
static void fi_private_free(struct fi_pool *p, void *ptr)
{
	uintptr_t a = (uintptr_t)ptr, e = a + fi_private_size(ptr);
	uintptr_t lo = (a + FI_PAGE - 1) & ~(FI_PAGE - 1), hi = e & ~(FI_PAGE - 1);

	if (__atomic_sub_fetch(&p->live, 1, __ATOMIC_ACQ_REL) == 0 &&
	    p != fi_cur[0] && p != fi_cur[1]) {
		fi_pool_drop(p);
		return;
	}
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/*
 * Bytes the runtime asked of libc's allocator (shared runtime): whether
 * the start-up's malloc_trim can give anything back (start.c). Written
 * by any thread, read once; a forged value only changes whether the heap
 * is trimmed.
 */
static size_t fi_alloc_libc;

size_t fi_alloc_libc_bytes(void)
{
	return __atomic_load_n(&fi_alloc_libc, __ATOMIC_RELAXED);
}

static void fi_alloc_count(size_t n)
{
	__atomic_fetch_add(&fi_alloc_libc, n, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t n)
{
	if (fi_alloc_on)
		return fi_private_alloc(n);
	fi_alloc_count(n);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (!fi_alloc_on) {
		fi_alloc_count(size && n <= SIZE_MAX / size ? n * size : 0);
		return __real_calloc(n, size);
	}
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return fi_private_alloc(n * size);
}

void __wrap_free(void *ptr)
{
	struct fi_pool *p;

	if (!ptr)
		return;
	p = fi_npools ? fi_pool_of(ptr) : NULL;
	if (p)
		fi_private_free(p, ptr);
	else
		__real_free(ptr);
}

void *__wrap_realloc(void *ptr, size_t n)
{
	struct fi_pool *p = ptr && fi_npools ? fi_pool_of(ptr) : NULL;
	size_t old;
	void *q;

	if (ptr && !p) {
		fi_alloc_count(n);
		return __real_realloc(ptr, n);
	}
	if (!ptr)
		return __wrap_malloc(n);
	old = fi_private_size(ptr);
	q = __wrap_malloc(n);
	if (!q)
		return NULL;
	memcpy(q, ptr, old < n ? old : n);
	fi_private_free(p, ptr);
	return q;
}

/* libc's strdup is malloc and a copy: the same through the malloc
 * above, so the loader binds no strdup at start. */
char *__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = __wrap_malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

/*
 * libc's malloc_trim, looked up when first needed: start-up trims only
 * after a scan that freed enough (start.c, fi_rt_trim_worth), a program
 * of many functions, and a lookup then (libc's dlsym, RTLD_DEFAULT: the
 * scope the loader's binding of an import would search) costs less than
 * binding the import at every start of every program. Never during the
 * early start, whose blocks are not libc's.
 */
extern void *fi_alloc_libc_dlsym(void *handle, const char *name);
__asm__(".symver fi_alloc_libc_dlsym, dlsym@GLIBC_2.2.5");

int __wrap_malloc_trim(size_t pad)
{
	int (*trim)(size_t);

	if (fi_alloc_on)
		return 0;
	trim = (int (*)(size_t))fi_alloc_libc_dlsym(RTLD_DEFAULT, "malloc_trim");
	return trim ? trim(pad) : 0;
}

/*
 * Always ours, also after the early start (the buffer from libc's malloc
 * then, as glibc's own merge sort takes it): elf/sort.c's stable sort,
 * as glibc's, and one import fewer for the loader to bind. Without a
 * buffer, its insertion sort (only for a failure).
 */
void __wrap_qsort(void *b, size_t n, size_t size,
		  int (*cmp)(const void *, const void *))
{
	void *tmp;

	if (n < 2 || !size)
		return;
	tmp = n <= SIZE_MAX / size ? __wrap_malloc(n * size) : NULL;
	fi_sort_stable(b, n, size, cmp, tmp);
	__wrap_free(tmp);
}
