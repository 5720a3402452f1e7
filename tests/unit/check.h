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

#endif
