// SPDX-License-Identifier: MIT
/*
 * compat_next_owner.sh's program, with the interposers of
 * compat_next_lib.c preloaded:
 *   (none)     time(), which the interposers take over: prints the chain
 *   next       the executable's own dlsym(RTLD_NEXT, "time"), called
 *   open LIB   LIB dlopen'ed (not preloaded), its time() called
 *   ns LIB     LIB dlmopen'ed into a new namespace, its time() called,
 *              then that namespace's stdout flushed
 * The test runs "open"; not "ns": a kCFI interposer dlmopen'ed gets no
 * veneer from RTLD_NEXT (docs/compat.md); kept to show it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef time_t (*time_fn)(time_t *);
typedef int (*fflush_fn)(FILE *);

static void *owner_load(const char *how, const char *lib)
{
	if (!strcmp(how, "open"))
		return dlopen(lib, RTLD_NOW);
	if (!strcmp(how, "ns"))
		return dlmopen(LM_ID_NEWLM, lib, RTLD_NOW);
	return NULL;
}

int main(int argc, char **argv)
{
	fflush_fn fl = NULL;
	time_fn t;
	void *h;
	long v;

	if (argc < 2) {
		printf("|%ld\n", (long)time(NULL));
		return 0;
	}
	if (!strcmp(argv[1], "next")) {
		t = (time_fn)dlsym(RTLD_NEXT, "time");
	} else {
		h = argc > 2 ? owner_load(argv[1], argv[2]) : NULL;
		t = h ? (time_fn)dlsym(h, "time") : NULL;
		fl = h ? (fflush_fn)dlsym(h, "fflush") : NULL;
	}
	if (!t) {
		fprintf(stderr, "owner: no time: %s\n", dlerror());
		return 4;
	}
	v = (long)t(NULL);
	if (fl)
		fl(NULL);
	printf("|%ld\n", v);
	return 0;
}
