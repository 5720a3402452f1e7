/* SPDX-License-Identifier: MIT */
/*
 * tests/e2e/rt_sparse.sh: text with sites on some pages and none on four
 * pages between them (a function that is only int3 padding, never called
 * nor address-taken). Prints, for a page with a site and a page of the
 * padding, the mapping holding it in /proc/self/maps ("file" or "anon")
 * and whether the page itself is the file's ("shared": page cache) or a
 * private copy ("private", /proc/self/pagemap): for the executable,
 * rewritten at start-up with no other thread, and for a library built
 * from this same file, dlopen'ed while a second thread is alive
 * (argv[1]). sp_exe_near: a site the test links next to the runtime's
 * own code in a -static-fineibt build (rt_sparse.sh).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/mapkind.h"

typedef int (*fn_t)(int);

#ifdef RT_SPARSE_LIB
#define SP(x)	sp_lib_##x
#else
#define SP(x)	sp_exe_##x
#endif

__attribute__((noinline, aligned(4096))) int SP(first)(int x)
{
	return x + 1;
}

/* No site in here: 4 pages of int3 between the two functions. */
__attribute__((noinline, used, aligned(4096))) static void SP(pad)(void)
{
	__asm__ volatile(".skip 16384, 0xcc");
}

__attribute__((noinline, aligned(4096))) int SP(last)(int x)
{
	return x * 2;
}

fn_t volatile SP(f1) = SP(first), SP(f2) = SP(last);

/* A page in the middle of the padding. */
uintptr_t SP(pad_page)(void)
{
	return ((uintptr_t)SP(pad) + 8192) & ~(uintptr_t)4095;
}

int SP(calls)(void)
{
	return SP(f1)(1) == 2 && SP(f2)(3) == 6;
}

#ifndef RT_SPARSE_LIB
/* Address-taken, called: its page holds sites. */
__attribute__((noinline)) int sp_exe_near(int x)
{
	return x + 3;
}

fn_t volatile sp_exe_nearp = sp_exe_near;

#ifdef RT_SPARSE_STRRCHR
/* A function the runtime imports (its GOT binds the executable's): the
 * executable holds code the runtime calls, it is not written in place.
 * (libfineibt.so has its own memcpy and the like since load/ownlibc.c;
 * strrchr it still takes from libc.) */
char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	do {
		if (*(volatile const char *)s == (char)c)
			last = s;
	} while (*s++);
	return (char *)last;
}
#endif

static void show(const char *what, uintptr_t site, uintptr_t pad)
{
	printf("%s site %s %s pad %s %s\n", what, kind(site), page(site),
	       kind(pad), page(pad));
}

static int pipefd[2];

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	return read(pipefd[0], &c, 1) == 1 ? NULL : arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	void *h;
	int (*calls)(void);
	uintptr_t (*pad)(void);
	fn_t first;

	if (!sp_exe_calls() || sp_exe_nearp(1) != 4)
		return 1;
	show("exe", (uintptr_t)sp_exe_first, sp_exe_pad_page());
	if (argc < 2)
		return 0;
	if (pipe(pipefd) || pthread_create(&t, NULL, waiter, NULL))
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	calls = h ? (int (*)(void))dlsym(h, "sp_lib_calls") : NULL;
	pad = h ? (uintptr_t (*)(void))dlsym(h, "sp_lib_pad_page") : NULL;
	first = h ? (fn_t)dlsym(h, "sp_lib_first") : NULL;
	if (write(pipefd[1], "x", 1) != 1 || pthread_join(t, NULL))
		return 3;
	if (!calls || !pad || !first || !calls())
		return 4;
	show("lib", (uintptr_t)first, pad());
	return 0;
}
#endif
