// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_stockven.sh: a writable pointer word of a stock kCFI
 * library (compat_stock_lib.c's stock_cmp, bound by the loader to
 * strcmp: an R_X86_64_64 word in .data) rewritten by an attacker with a
 * write primitive before the runtime's next typed-veneer pass (any
 * dlopen of a kCFI module runs one over every stock module).
 *
 *   protect_stockven LIB LIB2 [PWN]
 *       dlopen LIB, sort through its libc pointer ("sort ...");
 *       with PWN (protect_stockven_pwn.c, uninstrumented): write the raw
 *       address of its pwn_cmp into the word; then dlopen LIB2 (the
 *       pass), print "pass done" and sort again through LIB: its by_name
 *       calls the word with strcmp's type. A veneer made from the word's
 *       value would turn that call into a call of pwn_cmp ("PWNED"): the
 *       attacker's function reached through a typed call. Without one,
 *       the library's kCFI check traps on pwn_cmp (no hash): fatal,
 *       reported.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*cmp_t)(const char *, const char *);

static void *open_lib(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);

	if (!h)
		printf("dlopen %s: %s\n", path, dlerror());
	return h;
}

/* The attacker's function, raw: the uninstrumented PWN's pwn_cmp. */
static void *attacker_fn(const char *pwn)
{
	void *h = open_lib(pwn);
	void *(*addr)(void) = h ? (void *(*)(void))dlsym(h, "pwn_addr") : NULL;

	return addr ? addr() : NULL;
}

int main(int argc, char **argv)
{
	int (*sort)(const char **, int);
	const char *w[] = { "pear", "apple", "fig" };
	void *h, *target;
	cmp_t *word;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		return 2;
	h = open_lib(argv[1]);
	if (!h)
		return 2;
	sort = (int (*)(const char **, int))dlsym(h, "stock_sort");
	word = (cmp_t *)dlsym(h, "stock_cmp");
	if (!sort || !word)
		return 2;
	printf("sort %d %s\n", sort(w, 3), w[0]);
	if (argc > 3) {
		target = attacker_fn(argv[3]);
		if (!target) {
			printf("no target\n");
			return 2;
		}
		*(void *volatile *)word = target;
	}
	if (!open_lib(argv[2]))
		return 2;
	printf("pass done\n");
	w[0] = "pear";
	w[1] = "apple";
	printf("sort %d %s\n", sort(w, 3), w[0]);
	return 0;
}
