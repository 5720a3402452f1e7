// SPDX-License-Identifier: MIT
/*
 * dlthr LIBA LIBB ROUNDS: two threads, each dlopen's its own kCFI library
 * (RTLD_NOW), calls its function through the pointer dlsym gave, and
 * dlclose's it, ROUNDS times. Every load is rewritten by the runtime while
 * the other thread loads, rewrites or unloads. Prints "dlthr ok".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef long (*dlthr_fn)(const char *);

static const char *libs[2];
static int rounds;
static long bad;

static void *worker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < rounds; i++) {
		void *h = dlopen(libs[id], RTLD_NOW | RTLD_LOCAL);
		dlthr_fn f = h ? (dlthr_fn)dlsym(h, id ? "fb" : "fa") : NULL;

		if (!f || f("abc") != 5) {
			fprintf(stderr, "dlthr: round %d, thread %ld: %s\n", i,
				id, h ? "wrong result" : dlerror());
			__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
		}
		if (h)
			dlclose(h);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc < 4)
		return 2;
	libs[0] = argv[1];
	libs[1] = argv[2];
	rounds = atoi(argv[3]);
	for (long i = 0; i < 2; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 3;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (bad)
		return 1;
	printf("dlthr ok\n");
	return 0;
}
