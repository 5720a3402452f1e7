/* SPDX-License-Identifier: MIT */
/*
 * conc_trap [N]: N threads (default 8) released together by a barrier
 * each make one type-confused indirect call, then a legal one. cfi=warn:
 * every failure is reported, every thread continues; prints
 * "conc_trap survived N". Fatal modes: the process dies of SIGILL.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "conc.h"

#define MAXT 64
#define NOINLINE __attribute__((noinline))

NOINLINE static long inc(long x) { return x + 1; }

static conc_fn1_t volatile pinc = inc;
static pthread_barrier_t bar;
static long survived;

NOINLINE static long confused(conc_fn1_t f, long x)
{
	conc_bad_t g = (conc_bad_t)(void *)f;

	return g("x", x);
}

static void *worker(void *arg)
{
	long id = (long)arg;

	pthread_barrier_wait(&bar);
	confused(pinc, id);
	if (pinc(id) == id + 1)
		__atomic_add_fetch(&survived, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAXT];
	long n = argc > 1 ? atol(argv[1]) : 8;

	if (n < 1 || n > MAXT)
		return 2;
	pthread_barrier_init(&bar, NULL, (unsigned int)n);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("conc_trap survived %ld\n", survived);
	return 0;
}
