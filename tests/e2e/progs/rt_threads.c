// SPDX-License-Identifier: MIT
/*
 * Several threads making indirect calls (inside the executable and into
 * libfi_rta.so) while the main thread dlopen's libfi_rtb.so, calls into
 * it, and dlclose's it again, many times: every dlopen rewrites the new
 * module while the other threads run. Prints "threads ok".
 *
 *   rt_threads LIBB [ROUNDS]
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_mods.h"

#define NTHREADS 4
#define NOINLINE __attribute__((noinline))

NOINLINE static long inc(long x) { return x + 1; }
NOINLINE static long add(long a, long b) { return a + b; }

static fn1_t volatile pinc = inc;
static fn2_t volatile padd = add;
static volatile int done;
static long errors[NTHREADS], calls[NTHREADS];

static void *worker(void *arg)
{
	long id = (long)arg;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) || calls[id] < 1000) {
		long x = calls[id];

		if (pinc(x) != x + 1 || padd(x, 2) != x + 2 ||
		    rta_apply(pinc, x) != x + 1 || rta_op()(x, 2) != 2 * x)
			errors[id]++;
		calls[id]++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	long bad = 0;

	if (argc < 2)
		return 2;
	rta_set_cb(inc);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int r = 0; r < rounds; r++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		rtb_apply2_t apply2;
		rtb_ctor_value_t ctor;

		if (!h) {
			fprintf(stderr, "rt_threads: %s\n", dlerror());
			return 1;
		}
		apply2 = (rtb_apply2_t)dlsym(h, "rtb_apply2");
		ctor = (rtb_ctor_value_t)dlsym(h, "rtb_ctor_value");
		if (!apply2 || !ctor || apply2(padd, r, 1) != r + 1 ||
		    ctor() != 6)
			bad++;
		dlclose(h);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		bad += errors[i];
	}
	if (bad) {
		fprintf(stderr, "rt_threads: %ld wrong results\n", bad);
		return 1;
	}
	printf("threads ok\n");
	return 0;
}
