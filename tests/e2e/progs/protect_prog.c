// SPDX-License-Identifier: MIT
/*
 * End-to-end program for tests/e2e/protect_*.sh, built with fineibt-cc.
 *
 *   protect_prog write NAME [LIB]  (dlopen LIB first), install a SIGILL
 *                       handler of its own through sigaction (recorded by
 *                       the runtime in its read-only state), then write to
 *                       the runtime's object NAME (fineibt_debug_object):
 *                       prints "writing NAME" and, if the write did not
 *                       fault, "wrote NAME"
 *   protect_prog maps [LIB]  no rwx mapping in /proc/self/maps; with LIB,
 *                       again after dlopen and legal calls into it;
 *                       prints "maps ok" or the offending lines
 *   protect_prog maps-control  the same check after mapping an rwx page
 *                       itself: must print the "rwx" line (exit 1)
 *   protect_prog dl LIB      dlopen LIB, legal calls through pointers into
 *                       and out of it ("dl ok"), then a confused call in it
 *                       ("survived dl" if it returns)
 *   protect_prog confuse     a type-confused call ("survived" if it returns)
 *   protect_prog config      prints "config: " + the resolved cfi= list
 *   protect_prog key LIB OUT [LIB2]  use the API paths that touch the
 *                       key (rehash, get_config, func_hash, JIT register,
 *                       dlopen LIB; dlopen LIB2 from a thread with a 32 KiB
 *                       stack, whose scrub must stay inside that stack),
 *                       run /usr/bin/env > OUT (what a child inherits),
 *                       print "ready", wait for a line on stdin
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fineibt.h"

#define NOINLINE __attribute__((noinline))

typedef long (*fn1_t)(long);
typedef long (*fnp_t)(const char *, long);
/*
 * Test-only (tests/lib/rtdebug.c): only the test build of the runtime has
 * it ($(BUILD)/testlib, LD_LIBRARY_PATH; rtdebug.o in the static program);
 * weak, so that the program runs against the shipped library too (asked
 * of dlsym whether it is there). Called
 * directly: a pointer from dlsym would be an unchecked-type target (the
 * library is not instrumented) and rightly trap.
 */
const void *fineibt_debug_object(const char *name) __attribute__((weak));
#ifndef PR_DEBUG_LINKED
#define PR_DEBUG_LINKED 0
#endif

NOINLINE static long inc(long x) { return x + 1; }
static fn1_t volatile p_inc = inc;
/* More preambles for protect_scan's vote (run-time ^ compile-time hash). */
NOINLINE static long v1(long x) { return x ^ 1; }
NOINLINE static long v2(long x, long y) { return x ^ y; }
NOINLINE static int v3(const char *s) { return s[0]; }
NOINLINE static void v4(int *p) { *p = 4; }
NOINLINE static long v5(long x, long y, long z) { return x ^ y ^ z; }
void *volatile protect_voters[] = { v1, v2, v3, v4, v5 };

static void own_sigill(int sig)
{
	(void)sig;
	_exit(3);
}

static int do_write(const char *name, const char *lib)
{
	struct sigaction sa = { .sa_handler = own_sigill };
	volatile unsigned char *p;

	if (lib && !dlopen(lib, RTLD_NOW)) {
		printf("dlopen failed: %s\n", dlerror());
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, NULL)) {
		printf("sigaction failed\n");
		return 2;
	}
	/* Not "!fineibt_debug_object": the linker may give an undefined weak
	 * function a PLT address. The static program links rtdebug.o. */
	if (!PR_DEBUG_LINKED && !dlsym(RTLD_DEFAULT, "fineibt_debug_object")) {
		printf("no debug export\n");
		return 2;
	}
	p = (volatile unsigned char *)fineibt_debug_object(name);
	if (!p) {
		printf("no object %s\n", name);
		return 2;
	}
	printf("writing %s\n", name);
	fflush(stdout);
	/* Flip a byte: the weakening direction for a flag or a mode. */
	*p = (unsigned char)(*p ^ 0xff);
	printf("wrote %s\n", name);
	return 0;
}

static int check_maps(const char *when)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int bad = 0;

	while (f && fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%*s %7s", perms) == 1 && perms[1] == 'w' &&
		    perms[2] == 'x') {
			printf("rwx %s: %s", when, line);
			bad++;
		}
	}
	if (f)
		fclose(f);
	return f ? bad : 1;
}

static void *open_lib(const char *lib, long (**apply)(int, long),
		      fn1_t (**get)(int), long (**confused)(long))
{
	void *h = dlopen(lib, RTLD_NOW);

	if (!h)
		return NULL;
	*apply = (long (*)(int, long))dlsym(h, "pl_apply");
	*get = (fn1_t (*)(int))dlsym(h, "pl_get");
	*confused = (long (*)(long))dlsym(h, "pl_confused");
	return *apply && *get && *confused ? h : NULL;
}

/* Legal calls both ways across the module boundary. */
static bool lib_calls(long (*apply)(int, long), fn1_t (*get)(int))
{
	return apply(0, 21) == 42 && apply(1, 41) == 42 && get(0)(21) == 42 &&
	       get(1)(p_inc(40)) == 42;
}

static int do_maps(const char *lib)
{
	long (*apply)(int, long), (*confused)(long);
	fn1_t (*get)(int);
	int bad = check_maps("start-up");

	if (lib) {
		if (!open_lib(lib, &apply, &get, &confused) || !lib_calls(apply, get)) {
			printf("dlopen/calls failed\n");
			return 2;
		}
		bad += check_maps("after dlopen");
	}
	if (!bad)
		printf("maps ok\n");
	return bad ? 1 : 0;
}

static int do_dl(const char *lib)
{
	long (*apply)(int, long), (*confused)(long);
	fn1_t (*get)(int);

	if (!open_lib(lib, &apply, &get, &confused)) {
		printf("dlopen failed: %s\n", dlerror());
		return 2;
	}
	if (!lib_calls(apply, get)) {
		printf("legal calls failed\n");
		return 1;
	}
	printf("dl ok\n");
	fflush(stdout);
	confused(1);
	printf("survived dl\n");
	return 0;
}

static int do_confuse(void)
{
	fnp_t f = (fnp_t)(void *)p_inc;

	f("x", 1);
	printf("survived\n");
	return 0;
}

static int do_config(void)
{
	struct fineibt_config cfg;
	char s[64];

	if (fineibt_get_config(&cfg))
		return 2;
	fineibt_config_str(&cfg, s, sizeof(s));
	printf("config: %s\n", s);
	return 0;
}

/* dlopen @arg and call into it, on a small stack. */
static void *key_thread(void *arg)
{
	long (*apply)(int, long), (*confused)(long);
	fn1_t (*get)(int);

	if (!open_lib(arg, &apply, &get, &confused) || !lib_calls(apply, get))
		return arg;
	return NULL;
}

/* Run key_thread(@lib) on a thread with a 32 KiB stack. */
static bool key_small_stack(const char *lib)
{
	pthread_attr_t a;
	pthread_t t;
	void *ret = (void *)lib;

	if (pthread_attr_init(&a) || pthread_attr_setstacksize(&a, 32 * 1024) ||
	    pthread_create(&t, &a, key_thread, (void *)lib))
		return false;
	pthread_join(t, &ret);
	return !ret;
}

/* Every public path that uses the key, then a child, then wait. */
static int do_key(const char *lib, const char *out, const char *lib2)
{
	long (*apply)(int, long), (*confused)(long);
	struct fineibt_config cfg;
	struct fineibt_hash h;
	fn1_t (*get)(int);
	char cmd[4200];
	uint8_t *jit;
	size_t n;

	/* Yama ptrace_scope=1: let the observer (a sibling) read our memory. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	fineibt_get_config(&cfg);
	h = fineibt_rehash_hash(0x12345678);
	if (fineibt_func_hash((const void *)p_inc, &h))
		return 2;
	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (jit == MAP_FAILED ||
	    fineibt_emit_call(jit, 4096, (uint64_t)(uintptr_t)jit, h,
			      FINEIBT_REG_R11, false, &n) ||
	    mprotect(jit, 4096, PROT_READ | PROT_EXEC) ||
	    fineibt_jit_register(jit, 4096))
		return 3;
	if (!open_lib(lib, &apply, &get, &confused) || !lib_calls(apply, get))
		return 4;
	if (lib2 && !key_small_stack(lib2))
		return 7;
	snprintf(cmd, sizeof(cmd), "/usr/bin/env > '%s'", out);
	if (system(cmd))
		return 5;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(cmd, sizeof(cmd), stdin))
		return 6;
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	(void)protect_voters[0];
	if (!strcmp(cmd, "write") && argc > 2)
		return do_write(argv[2], argc > 3 ? argv[3] : NULL);
	if (!strcmp(cmd, "maps-control")) {
		if (mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
			return 2;
		return do_maps(NULL);
	}
	if (!strcmp(cmd, "maps"))
		return do_maps(argc > 2 ? argv[2] : NULL);
	if (!strcmp(cmd, "dl") && argc > 2)
		return do_dl(argv[2]);
	if (!strcmp(cmd, "confuse"))
		return do_confuse();
	if (!strcmp(cmd, "config"))
		return do_config();
	if (!strcmp(cmd, "key") && argc > 3)
		return do_key(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	fprintf(stderr, "usage: protect_prog write NAME [LIB] | maps [LIB] | "
		"dl LIB | confuse | config | key LIB OUT [LIB2]\n");
	return 2;
}
