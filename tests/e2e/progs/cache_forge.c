// SPDX-License-Identifier: MIT
/*
 * cache_forge (tests/e2e/cache_forge.sh): a dlopen whose library hits the
 * shared text cache, with an attacker that writes into the scan's
 * scratch while the scan waits (the test runtime's park hook, at every
 * window the scan opens: the same as a thread racing it with a write
 * primitive). The scan keeps, for each module it found an entry for, the
 * entry's descriptor, the module's identity and its text range [lo, lo +
 * len) in heap memory, from the lookup to the mapping; the attacker finds
 * the library's (lo, len) there and moves lo onto another library's text
 * (libm's, loaded before and never called).
 *
 *   cache_forge LIB          dlopen LIB, then "victim kept" when libm's
 *                            text is still libm's file in /proc/self/maps,
 *                            or "victim replaced by PATH" (the cache
 *                            entry mapped over it); "forged" first when
 *                            the attacker found the range to move.
 *   cache_forge none LIB     the control: no attacker.
 *
 * Run against the test runtime (LD_LIBRARY_PATH: fineibt_debug_park).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*park_fn)(const char *where, const void *scratch, size_t len);

static char maps[1 << 20];
static const char *lib_name;
static uint64_t victim_lo;
static int forged;

/* /proc/self/maps into maps[] (no stdio: this runs inside the scan). */
static bool read_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return false;
	while (have < sizeof(maps) - 1 &&
	       (n = read(fd, maps + have, sizeof(maps) - 1 - have)) > 0)
		have += (size_t)n;
	close(fd);
	maps[have] = '\0';
	return have > 0;
}

/* The line of maps[] starting at @at: its range, permissions and path. */
static const char *line_of(const char *at, uint64_t *lo, uint64_t *hi,
			   char perm[5], const char **path, size_t *plen)
{
	const char *end = strchr(at, '\n'), *p;
	char *e;

	if (!end)
		end = at + strlen(at);
	*lo = strtoull(at, &e, 16);
	*hi = strtoull(e + 1, &e, 16);
	memcpy(perm, e + 1, 4);
	perm[4] = '\0';
	p = strchr(e, '/');
	if (!p || p > end)
		p = strchr(e, '[');
	*path = p && p < end ? p : end;
	*plen = (size_t)(end - *path);
	return *end ? end + 1 : end;
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);

	return n >= t && !memcmp(s + n - t, tail, t);
}

/* The first executable mapping whose path ends with @tail. */
static bool text_of(const char *tail, uint64_t *lo, uint64_t *hi)
{
	const char *at = maps, *path;
	char perm[5];
	size_t plen;

	while (*at) {
		at = line_of(at, lo, hi, perm, &path, &plen);
		if (perm[2] == 'x' && ends_with(path, plen, tail))
			return true;
	}
	return false;
}

/* Move the scan's record of [lo, lo + len) onto the victim. */
static void attack(const char *where, const void *scratch, size_t len)
{
	uint64_t lo, hi, a, b;
	const char *at = maps, *path;
	char perm[5];
	size_t plen;

	(void)where;
	(void)scratch;
	(void)len;
	if (forged || !read_maps() || !text_of(lib_name, &lo, &hi))
		return;
	/* Writable anonymous memory (the heap): no path, or [heap]. */
	while (*at) {
		at = line_of(at, &a, &b, perm, &path, &plen);
		if (perm[0] != 'r' || perm[1] != 'w' ||
		    (plen && strncmp(path, "[heap]", 6)))
			continue;
		for (uint64_t *w = (uint64_t *)a; (uint64_t)(w + 2) <= b; w++) {
			if (w[0] == lo && w[1] == hi - lo) {
				w[0] = victim_lo;
				forged++;
			}
		}
	}
}

static bool victim_kept(void)
{
	const char *at = maps, *path;
	uint64_t lo, hi;
	char perm[5];
	size_t plen;

	if (!read_maps())
		return false;
	while (*at) {
		at = line_of(at, &lo, &hi, perm, &path, &plen);
		if (lo <= victim_lo && victim_lo < hi) {
			if (ends_with(path, plen, "/libm.so.6"))
				return true;
			printf("victim replaced by %.*s\n", (int)plen, path);
			return false;
		}
	}
	printf("victim unmapped\n");
	return false;
}

int main(int argc, char **argv)
{
	void (*set_park)(park_fn) =
		(void (*)(park_fn))dlsym(RTLD_DEFAULT, "fineibt_debug_park");
	bool control = argc == 3 && !strcmp(argv[1], "none");
	uint64_t hi;

	setvbuf(stdout, NULL, _IONBF, 0);
	if ((argc != 2 && !control) || !set_park) {
		fprintf(stderr, "usage: cache_forge [none] LIB (against the test "
			"runtime)\n");
		return 2;
	}
	lib_name = strrchr(argv[argc - 1], '/');
	lib_name = lib_name ? lib_name : argv[argc - 1];
	if (!dlopen("libm.so.6", RTLD_NOW) || !read_maps() ||
	    !text_of("/libm.so.6", &victim_lo, &hi)) {
		fprintf(stderr, "cache_forge: no libm text\n");
		return 2;
	}
	if (!control)
		set_park(attack);
	if (!dlopen(argv[argc - 1], RTLD_NOW)) {
		fprintf(stderr, "cache_forge: %s\n", dlerror());
		return 2;
	}
	set_park(NULL);
	if (forged)
		printf("forged\n");
	if (victim_kept())
		printf("victim kept\n");
	return 0;
}
