// SPDX-License-Identifier: MIT
/*
 * End-to-end program for tests/e2e/cache.sh (the shared text cache),
 * built with fineibt-cc; also the library of the dlopen cases
 * (-DRT_CACHE_LIB).
 *
 *   rt_cache run            calls through pointers (arity 0..3, a tail
 *                           call); prints "ok SUM"
 *   rt_cache dump FILE      the bytes of its text segment into FILE
 *   rt_cache where          "text PATH" (the file its text is mapped from,
 *                           from /proc/self/maps, or "anon"), then
 *                           "private KB" (its pages copied: Anonymous of
 *                           that mapping in /proc/self/smaps)
 *   rt_cache wait           "where", then waits for a line on stdin, then
 *                           "run" again (the test changes files meanwhile)
 *   rt_cache lib PATH       dlopen PATH, call through its pointers,
 *                           "where" of the library's text, "ok SUM"
 *   rt_cache libwait PATH   "lib", then "sum X" (a checksum of the
 *                           library's text), waits for a line on stdin,
 *                           then "sum X" and "ok SUM" again
 *   rt_cache linked         (built with -DRT_CACHE_LINKED against the
 *                           library) "where" of the library, "ok SUM"
 *   rt_cache confuse        a type-confused call (a CFI failure)
 *   rt_cache spin MS        spin in rt_cache_spin for MS milliseconds
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#ifndef RT_CACHE_VARIANT
#define RT_CACHE_VARIANT 100
#endif
NOINLINE static long c0(void) { return RT_CACHE_VARIANT; }
NOINLINE static long c1(long a) { return a + 1; }
NOINLINE static long c2(long a, long b) { return a + b; }
NOINLINE static long c3(long a, long b, long c) { return a + b + c; }

typedef long (*fn0_t)(void);
typedef long (*fn1_t)(long);
typedef long (*fn2_t)(long, long);
typedef long (*fn3_t)(long, long, long);

static fn0_t volatile p0 = c0;
static fn1_t volatile p1 = c1;
static fn2_t volatile p2 = c2;
static fn3_t volatile p3 = c3;

NOINLINE static long tail1(long a)
{
	return p1(a);
}

#ifdef RT_CACHE_LIB
long rt_cache_lib_calls(void)
{
	return p0() + p1(1) + p2(2, 3) + p3(4, 5, 6) + tail1(7);
}
#else

static long calls(void)
{
	return p0() + p1(1) + p2(2, 3) + p3(4, 5, 6) + tail1(7);
}

/* The executable segment of the module holding @addr. */
struct seg {
	const void *addr;
	unsigned long lo, len;
};

static int seg_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct seg *s = arg;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    (unsigned long)s->addr >= lo &&
		    (unsigned long)s->addr < lo + ph->p_memsz) {
			s->lo = lo;
			s->len = ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static struct seg text_of(const void *addr)
{
	struct seg s = { .addr = addr };

	dl_iterate_phdr(seg_cb, &s);
	return s;
}

/* The file mapped at @addr and that mapping's private kB (smaps). */
static void where(const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi, kb, priv = 0;
	char line[4096], path[4096] = "anon";
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			char *p = strchr(line, '/');

			in = a >= lo && a < hi;
			if (in && p) {
				p[strcspn(p, "\n")] = '\0';
				snprintf(path, sizeof(path), "%s", p);
			}
			continue;
		}
		/* copies of its pages (Private_Clean also counts the file's
		 * pages no other process maps) */
		if (in && sscanf(line, "Anonymous: %lu kB", &kb) == 1)
			priv += kb;
	}
	if (f)
		fclose(f);
	printf("text %s\nprivate %lu\n", path, priv);
}

static int dump(const char *file)
{
	struct seg s = text_of((const void *)calls);
	FILE *f = fopen(file, "wb");

	if (!s.len || !f || fwrite((const void *)s.lo, 1, s.len, f) != s.len)
		return 1;
	return fclose(f) != 0;
}

NOINLINE void rt_cache_spin(long ms)
{
	struct timespec t0, t;
	volatile long x = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += p2(i, 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A checksum of the text segment holding @addr. */
static unsigned long text_sum(const void *addr)
{
	struct seg s = text_of(addr);
	unsigned long h = 5381;

	for (unsigned long i = 0; i < s.len; i++)
		h = h * 33 + ((const unsigned char *)s.lo)[i];
	return h;
}

static int lib(const char *path, bool wait)
{
	void *h = dlopen(path, RTLD_NOW);
	long (*fn)(void);
	char line[64];

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (long (*)(void))dlsym(h, "rt_cache_lib_calls");
	if (!fn)
		return 1;
	where((const void *)fn);
	printf("ok %ld\n", fn());
	if (!wait)
		return 0;
	printf("sum %lx\n", text_sum((const void *)fn));
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	printf("sum %lx\n", text_sum((const void *)fn));
	printf("ok %ld\n", fn());
	return 0;
}

#ifdef RT_CACHE_LINKED
long rt_cache_lib_calls(void);
#endif

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "run";
	char line[64];

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(cmd, "run")) {
		printf("ok %ld\n", calls());
	} else if (!strcmp(cmd, "dump") && argc > 2) {
		return dump(argv[2]);
	} else if (!strcmp(cmd, "where")) {
		where((const void *)calls);
	} else if (!strcmp(cmd, "wait")) {
		where((const void *)calls);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		printf("ok %ld\n", calls());
	} else if (!strcmp(cmd, "lib") && argc > 2) {
		return lib(argv[2], false);
	} else if (!strcmp(cmd, "libwait") && argc > 2) {
		return lib(argv[2], true);
#ifdef RT_CACHE_LINKED
	} else if (!strcmp(cmd, "linked")) {
		where((const void *)rt_cache_lib_calls);
		printf("ok %ld\n", rt_cache_lib_calls());
#endif
	} else if (!strcmp(cmd, "confuse")) {
		/* c2 called as a function of one argument */
		fn1_t volatile bad = (fn1_t)(void *)c2;

		printf("survived %ld\n", bad(1));
	} else if (!strcmp(cmd, "spin") && argc > 2) {
		rt_cache_spin(atol(argv[2]));
		printf("ok %ld\n", calls());
	} else {
		return 2;
	}
	return 0;
}
#endif
