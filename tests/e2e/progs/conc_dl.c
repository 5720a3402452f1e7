/* SPDX-License-Identifier: MIT */
/*
 * conc_dl LIB ROUNDS [bad]: 4 threads make indirect calls through
 * rewritten code of the executable while the main thread dlopen's LIB
 * (libconc.so), calls through it both ways and dlclose's it, ROUNDS
 * times. With "bad", every round also makes one type-confused call inside
 * LIB (cfi=warn: reported and continued; fatal: the first one kills).
 * Prints "conc_dl ok ROUNDS BADS" when every legal call returned right.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conc.h"

#define NTHREADS 4
#define NOINLINE __attribute__((noinline))

NOINLINE static long inc(long x) { return x + 1; }
NOINLINE static long dec(long x) { return x - 1; }

static conc_fn1_t volatile ptrs[2] = { inc, dec };
static volatile int done;
static long errors;

static void *worker(void *arg)
{
	long n = 0;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) || n < 1000) {
		if (ptrs[n & 1](n) != ((n & 1) ? n - 1 : n + 1))
			__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
		n++;
	}
	return NULL;
}

static long round_once(const char *lib, long r, bool bad)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	conc_apply_t apply, badf;
	conc_get_t get;
	long e = 0;

	if (!h) {
		fprintf(stderr, "conc_dl: %s\n", dlerror());
		return 1;
	}
	apply = (conc_apply_t)dlsym(h, "conc_lib_apply");
	get = (conc_get_t)dlsym(h, "conc_lib_get");
	badf = (conc_apply_t)dlsym(h, "conc_lib_bad");
	if (!apply || !get || !badf)
		e++;
	else if (apply(inc, r) != r + 1 || get()(r) != 3 * r)
		e++;
	else if (bad)
		badf(inc, r);
	dlclose(h);
	return e;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	bool bad = argc > 3 && !strcmp(argv[3], "bad");
	long e = 0;

	if (argc < 2)
		return 2;
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int r = 0; r < rounds; r++)
		e += round_once(argv[1], r, bad);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	e += errors;
	if (e) {
		printf("conc_dl: %ld wrong results\n", e);
		return 1;
	}
	printf("conc_dl ok %d %d\n", rounds, bad ? rounds : 0);
	return 0;
}
