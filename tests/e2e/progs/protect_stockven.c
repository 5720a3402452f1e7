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
 *   protect_stockven LIB LIB2 PWN dladdr
 *       the same, and PWN's link_map forged for the pass (its
 *       l_info[DT_SYMTAB] and l_info[DT_STRTAB] aimed at writable copies
 *       in which pwn_cmp's symbol is named "strcmp"): dladdr then names
 *       pwn_cmp "strcmp" exactly, which the pass took as the binding of
 *       strcmp in another object ("PWNED" on the tree before).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
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

static ElfW(Sym) fake_sym[64];
static char fake_str[4096];
static ElfW(Dyn) fake_dyn[2];

/*
 * @lm's l_info[DT_SYMTAB] and l_info[DT_STRTAB] (glibc-internal: the
 * words of its link_map pointing at those dynamic entries) aimed at
 * writable copies where the symbol at @fn is named "strcmp". Returns the
 * two slots' old values in @old, or false.
 */
static int forge_names(void *fn, ElfW(Dyn) **slot[2], ElfW(Dyn) *old[2])
{
	const ElfW(Sym) *sym = NULL;
	struct link_map *lm = NULL;
	const ElfW(Sym) *st = NULL;
	const char *str = NULL;
	ElfW(Dyn) *e[2] = { NULL, NULL };
	size_t strsz = 0, k;
	Dl_info di;

	if (!dladdr1(fn, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !dladdr1(fn, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return 0;
	for (ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			e[0] = d, st = (const ElfW(Sym) *)d->d_un.d_ptr;
		else if (d->d_tag == DT_STRTAB)
			e[1] = d, str = (const char *)d->d_un.d_ptr;
		else if (d->d_tag == DT_STRSZ)
			strsz = d->d_un.d_val;
	}
	k = (size_t)(sym - st);
	if (!e[0] || !e[1] || k >= 64 || strsz < 8 || strsz > sizeof(fake_str))
		return 0;
	memcpy(fake_sym, st, sizeof(fake_sym));
	/* Inside DT_STRSZ (dladdr checks that), over the first name. */
	memcpy(fake_str, str, strsz);
	strcpy(fake_str + 1, "strcmp");
	fake_sym[k].st_name = 1;
	fake_dyn[0] = (ElfW(Dyn)){ .d_tag = DT_SYMTAB, .d_un.d_ptr = (uintptr_t)fake_sym };
	fake_dyn[1] = (ElfW(Dyn)){ .d_tag = DT_STRTAB, .d_un.d_ptr = (uintptr_t)fake_str };
	for (int t = 0; t < 2; t++) {
		uintptr_t *w = (uintptr_t *)lm;

		slot[t] = NULL;
		for (size_t i = 0; i < 0x400 / sizeof(*w) && !slot[t]; i++) {
			if (w[i] == (uintptr_t)e[t])
				slot[t] = (ElfW(Dyn) **)&w[i];
		}
		if (!slot[t])
			return 0;
	}
	for (int t = 0; t < 2; t++) {
		old[t] = *slot[t];
		*slot[t] = &fake_dyn[t];	/* the write primitive */
	}
	return 1;
}

int main(int argc, char **argv)
{
	int (*sort)(const char **, int);
	const char *w[] = { "pear", "apple", "fig" };
	ElfW(Dyn) **slot[2] = { NULL, NULL }, *old[2];
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
		if (argc > 4 && !forge_names(target, slot, old)) {
			printf("no forgery\n");
			return 2;
		}
	}
	if (!open_lib(argv[2]))
		return 2;
	for (int t = 0; t < 2 && slot[t]; t++)
		*slot[t] = old[t];
	printf("pass done\n");
	w[0] = "pear";
	w[1] = "apple";
	printf("sort %d %s\n", sort(w, 3), w[0]);
	return 0;
}
