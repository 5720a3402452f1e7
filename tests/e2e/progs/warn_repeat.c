/* SPDX-License-Identifier: MIT */
/*
 * warn_repeat: CFI failures that repeat, for tests/e2e/warn_repeat.sh
 * (docs/traps.md, "Repeated failures"). Every failure is a call of a
 * function through a pointer of another type.
 *
 *   warn_repeat one N		N failures of one pair (site A, target t0)
 *   warn_repeat two N		N failures each of (A, t0) and (B, t0)
 *   warn_repeat many K		each of targets t0..t(K-1) twice from site A
 *   warn_repeat threads T N	T threads released together, each N times
 *				(A, t0) then (B, t1)
 *   warn_repeat tails N		N times each, alternating, from one call
 *				site: two functions that tail-call t0 as
 *				two other types (a check in the target sees
 *				one return address for both)
 *
 * Prints "warn_repeat ok <calls>" when every call went on (cfi=warn).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

typedef int (*good_t)(int);
typedef long (*bad_t)(const char *, long);

#define T8(p) p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7
#define DEF(n) NOINLINE static int t##n(int x) { return x + n; }
#define DEF8(p) DEF(p##0) DEF(p##1) DEF(p##2) DEF(p##3) DEF(p##4) DEF(p##5) DEF(p##6) DEF(p##7)
DEF8(1) DEF8(2) DEF8(3) DEF8(4) DEF8(5) DEF8(6) DEF8(7) DEF8(8) DEF8(9) DEF8(10)
DEF(0)

/* 81 distinct targets: more than the runtime's table holds (64). */
static good_t volatile targets[] = {
	t0, T8(t1), T8(t2), T8(t3), T8(t4), T8(t5), T8(t6), T8(t7), T8(t8),
	T8(t9), T8(t10),
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static long calls;

NOINLINE static void site_a(good_t f)
{
	bad_t g = (bad_t)(void *)f;

	g("a", 1);
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

NOINLINE static void site_b(good_t f)
{
	bad_t g = (bad_t)(void *)f;

	g("b", 2);
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

typedef long (*bad2_t)(double, long, long);

/* Tail calls (the call is the function's last act: a jmp, no return
 * address of their own), each through another wrong type. */
NOINLINE static long tail_a(good_t f)
{
	return ((bad_t)(void *)f)("ta", 1);
}

NOINLINE static long tail_b(good_t f)
{
	return ((bad2_t)(void *)f)(1.0, 2, 3);
}

static long (*volatile tails[2])(good_t) = { tail_a, tail_b };

/* One call site for both: the return address a target's check reads. */
NOINLINE static void site_tail(int i)
{
	tails[i & 1](targets[0]);
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

static pthread_barrier_t bar;
static long per_thread;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);
	for (long i = 0; i < per_thread; i++) {
		site_a(targets[0]);
		site_b(targets[1]);
	}
	return NULL;
}

static int threads(long nt, long n)
{
	pthread_t t[16];

	if (nt < 1 || nt > 16)
		return 2;
	per_thread = n;
	pthread_barrier_init(&bar, NULL, (unsigned int)nt);
	for (long i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (long i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "one";
	long n = argc > 2 ? atol(argv[2]) : 10;

	if (!strcmp(what, "one")) {
		for (long i = 0; i < n; i++)
			site_a(targets[0]);
	} else if (!strcmp(what, "two")) {
		for (long i = 0; i < n; i++) {
			site_a(targets[0]);
			site_b(targets[0]);
		}
	} else if (!strcmp(what, "many")) {
		if (n < 1 || n > (long)NTARGETS)
			return 2;
		for (int r = 0; r < 2; r++)
			for (long i = 0; i < n; i++)
				site_a(targets[i]);
	} else if (!strcmp(what, "tails")) {
		for (long i = 0; i < 2 * n; i++)
			site_tail((int)i);
	} else if (!strcmp(what, "threads")) {
		if (threads(n, argc > 3 ? atol(argv[3]) : 1000))
			return 2;
	} else {
		return 2;
	}
	printf("warn_repeat ok %ld\n", calls);
	return 0;
}
