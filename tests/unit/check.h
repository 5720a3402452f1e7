/* SPDX-License-Identifier: MIT */
/*
 * Minimal test harness: each CHECK prints "PASS: case" or "FAIL: case: why"
 * (tests/run.sh counts those lines) and evaluates to the condition, so a
 * test can stop early: if (!CHECK(...)) return;
 */
#ifndef FI_CHECK_H
#define FI_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int fi_check_failed;

static inline bool fi_check(bool ok, const char *name, const char *file,
			    int line, const char *expr)
{
	if (ok) {
		printf("PASS: %s\n", name);
	} else {
		printf("FAIL: %s: %s:%d: %s\n", name, file, line, expr);
		fi_check_failed++;
	}
	fflush(stdout);
	return ok;
}

#define CHECK(name, cond) fi_check(!!(cond), (name), __FILE__, __LINE__, #cond)

/* Quiet variant for loops: prints only on failure; returns the condition. */
static inline bool fi_expect(bool ok, const char *name, const char *file,
			     int line, const char *expr)
{
	if (!ok) {
		printf("FAIL: %s: %s:%d: %s\n", name, file, line, expr);
		fi_check_failed++;
		fflush(stdout);
	}
	return ok;
}

#define EXPECT(name, cond) fi_expect(!!(cond), (name), __FILE__, __LINE__, #cond)

static inline int fi_check_exit(void)
{
	return fi_check_failed ? 1 : 0;
}

/*
 * @size bytes of int3 in a read-execute mapping (NULL if it cannot be
 * made): text for a fake module. The runtime registers a module only if
 * the kernel maps its text executable and never writable
 * (src/rt/rtverify.c), as a real module's is.
 */
#include <sys/mman.h>
static inline void *fi_test_text(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0xcc, size);
	if (mprotect(p, size, PROT_READ | PROT_EXEC)) {
		munmap(p, size);
		return NULL;
	}
	return p;
}

#endif
