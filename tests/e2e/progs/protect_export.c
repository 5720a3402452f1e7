// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_export.sh (docs/protection.md, "Values read from
 * writable memory"): dladdr's answer, which the dlsym veneers and the
 * SIGILL handler's exemption for exports take as "an export", names the
 * symbol through the object's link_map: l_info[DT_SYMTAB] and
 * l_info[DT_STRTAB] point at dynamic entries a write primitive can
 * replace with entries of its own (the loader's heap). Built with
 * fineibt-cc:
 *
 *   protect_export symtab PLAIN COPY   PLAIN and COPY: two copies of
 *                       protect_export_lib.so. A control dlsym of
 *                       plain_entry and a call of another type through it
 *                       ("entry 5": its veneer). Then two forged
 *                       l_info[DT_SYMTAB]: COPY's names a writable
 *                       symbol of ours at plain_entry's index, whose value
 *                       is PLAIN's static plain_hidden, so libc's dlsym of
 *                       plain_entry in COPY answers plain_hidden; PLAIN's
 *                       names a table 8 bytes into a RELATIVE relocation
 *                       of its .rela.dyn (read-only, its own file), whose
 *                       addend, read as a symbol's value, is
 *                       plain_hidden: dladdr names it an export exactly.
 *                       "forged ran 7" when that answer got a veneer
 *                       (valid for every type) and the call of another
 *                       type through it ran
 *   protect_export strtab PLAIN  libc's l_info[DT_STRTAB] forged so that
 *                       longjmp's symbol reads as named "abs" (libc's own
 *                       string), then a call without a kCFI check (an
 *                       unprototyped pointer: the coarse check) to
 *                       longjmp: "longjmp reached" when the SIGILL
 *                       handler's exemption for exports let it through
 *                       (longjmp is a control-flow primitive it refuses
 *                       by name)
 *   protect_export none PLAIN  the control of strtab: the same call
 *                       unforged
 *   protect_export cross PLAIN  libc's l_info[DT_SYMTAB] forged around one
 *                       dlsym, so that its lookup answers the middle of
 *                       labs, where dladdr names no export: "cross
 *                       veneer" when that answer got a veneer, "cross
 *                       plain" when not
 *   protect_export jmpveneer PLAIN COPY  as symtab, COPY's forged lookup
 *                       answering libc's longjmp: "longjmp reached" when
 *                       it got a veneer and the call through it ran
 * The forgeries are undone before the program prints. Exit 2: the test's
 * own set-up failed (a layout it cannot read).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef long (*confused_t)(const char *, int);
typedef void *(*raw_t)(int);
typedef int Function ();

/* The dynamic entry of @tag in @lm's (read-only) dynamic section. */
static ElfW(Dyn) *dyn_entry(struct link_map *lm, ElfW(Sxword) tag)
{
	for (ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == tag)
			return d;
	}
	return NULL;
}

/* Its value as an address (the loader relocates d_ptr in place). */
static uintptr_t dyn_addr(struct link_map *lm, ElfW(Sxword) tag)
{
	ElfW(Dyn) *d = dyn_entry(lm, tag);

	if (!d)
		return 0;
	return d->d_un.d_ptr < lm->l_addr ? d->d_un.d_ptr + lm->l_addr : d->d_un.d_ptr;
}

/*
 * The word of @lm (glibc's link_map, whose l_info[] is internal) that
 * points at its dynamic entry of @tag: l_info[tag].
 */
static ElfW(Dyn) **info_slot(struct link_map *lm, ElfW(Sxword) tag)
{
	ElfW(Dyn) *d = dyn_entry(lm, tag);
	uintptr_t *w = (uintptr_t *)lm;

	for (size_t i = 0; d && i < 0x400 / sizeof(*w); i++) {
		if (w[i] == (uintptr_t)d)
			return (ElfW(Dyn) **)&w[i];
	}
	return NULL;
}

/* The index of @name in @lm's .dynsym (a small library: a bounded walk). */
static long sym_index(struct link_map *lm, const char *name)
{
	const ElfW(Sym) *s = (const ElfW(Sym) *)dyn_addr(lm, DT_SYMTAB);
	const char *str = (const char *)dyn_addr(lm, DT_STRTAB);

	for (long i = 1; s && str && i < 256; i++) {
		if (s[i].st_name < 0x10000 && !strcmp(str + s[i].st_name, name))
			return i;
	}
	return -1;
}

static void *open_lm(const char *path, struct link_map **lm)
{
	void *h = dlopen(path, RTLD_NOW);

	if (!h || dlinfo(h, RTLD_DI_LINKMAP, lm) || !*lm) {
		printf("dl failed: %s\n", path);
		return NULL;
	}
	return h;
}

static ElfW(Dyn) fake_plain, fake_copy;
static ElfW(Sym) fake_sym[2];

static jmp_buf env;

/*
 * @jmp: COPY's forged lookup answers libc's longjmp instead: a real
 * export, which dladdr names truly, but not the name asked for.
 */
static int do_symtab(const char *plain, const char *copy, int jmp)
{
	struct link_map *lm, *lm2;
	void *h = open_lm(plain, &lm), *h2 = h ? open_lm(copy, &lm2) : NULL;
	ElfW(Dyn) **slot, **slot2, *old, *old2;
	const ElfW(Rela) *rela;
	long j, j2, r = -1;
	uintptr_t hidden;
	size_t n;
	confused_t f;

	if (!h2)
		return 2;
	f = (confused_t)dlsym(h, "plain_entry");
	printf("entry %ld\n", f ? f("x", 1) : -1L);
	hidden = *(uintptr_t *)dlsym(h, "plain_table");
	rela = (const ElfW(Rela) *)dyn_addr(lm, DT_RELA);
	n = rela ? dyn_entry(lm, DT_RELASZ)->d_un.d_val / sizeof(*rela) : 0;
	for (size_t i = 0; i < n && r < 0; i++) {
		if (ELF64_R_TYPE(rela[i].r_info) == R_X86_64_RELATIVE &&
		    rela[i].r_addend == (ElfW(Sxword))(hidden - lm->l_addr))
			r = (long)i;
	}
	j = sym_index(lm, "plain_entry");
	j2 = sym_index(lm2, "plain_entry");
	slot = info_slot(lm, DT_SYMTAB);
	slot2 = info_slot(lm2, DT_SYMTAB);
	if (r < 0 || j < 0 || j2 < 0 || !slot || !slot2) {
		printf("setup failed: r=%ld j=%ld j2=%ld\n", r, j, j2);
		return 2;
	}
	/* COPY's lookup of plain_entry finds fake_sym[0]: PLAIN's hidden. */
	fake_sym[0] = ((const ElfW(Sym) *)dyn_addr(lm2, DT_SYMTAB))[j2];
	fake_sym[0].st_value = (jmp ? (uintptr_t)((raw_t)dlsym(h, "plain_raw"))(0)
				    : hidden) - lm2->l_addr;
	fake_copy.d_tag = DT_SYMTAB;
	fake_copy.d_un.d_ptr = (uintptr_t)&fake_sym[0] - j2 * sizeof(ElfW(Sym));
	/* PLAIN's symbol j (a chain dladdr walks) is relocation r, 8 in. */
	fake_plain.d_tag = DT_SYMTAB;
	fake_plain.d_un.d_ptr = (uintptr_t)&rela[r] + 8 - j * sizeof(ElfW(Sym));
	/* The write primitive: two words of the loader's heap. */
	old = *slot;
	old2 = *slot2;
	*slot = &fake_plain;
	*slot2 = &fake_copy;
	f = (confused_t)dlsym(h2, "plain_entry");
	*slot = old;
	*slot2 = old2;
	if (!f) {
		printf("setup failed: dlsym\n");
		return 2;
	}
	if (jmp) {
		if (!setjmp(env))
			((void (*)(jmp_buf, int))(void *)f)(env, 1);
		printf("longjmp reached\n");
		return 0;
	}
	/* A veneer (any type) or plain_hidden itself (a checking caller
	 * traps; "forged ran 5": the lookup was not forged). */
	printf("forged ran %ld\n", f("x", 1));
	return 0;
}

static int do_strtab(const char *plain, int forge)
{
	struct link_map *lm, *lc;
	void *h = open_lm(plain, &lm), *hc;
	ElfW(Dyn) **slot, *old;
	const ElfW(Sym) *lj = NULL, *ab = NULL;
	static ElfW(Dyn) fake;
	volatile int forged = 0;
	Dl_info di;
	raw_t raw;
	void *jmp, *abs_at;

	hc = h ? open_lm("libc.so.6", &lc) : NULL;
	raw = h ? (raw_t)dlsym(h, "plain_raw") : NULL;
	if (!hc || !raw)
		return 2;
	jmp = raw(0);
	abs_at = raw(1);
	if (!dladdr1(jmp, &di, (void **)&lj, RTLD_DL_SYMENT) || !lj ||
	    !dladdr1(abs_at, &di, (void **)&ab, RTLD_DL_SYMENT) || !ab ||
	    !(slot = info_slot(lc, DT_STRTAB))) {
		printf("setup failed\n");
		return 2;
	}
	/* libc's names shifted: longjmp's reads "abs" (libc's own bytes). */
	fake.d_tag = DT_STRTAB;
	fake.d_un.d_ptr = (uintptr_t)di.dli_sname - lj->st_name;
	old = *slot;
	if (setjmp(env)) {
		*slot = old;
		printf("longjmp reached (forged %d)\n", forged);
		return 0;
	}
	if (forge) {
		*slot = &fake;	/* the write primitive */
		forged = 1;
	}
	((Function *)jmp)(env, 1);
	*slot = old;
	printf("not reached\n");
	return 1;
}

/* A symbol table of the program's (zeros but one symbol): 8192 entries. */
static ElfW(Sym) pool[8192];

/*
 * The cross-object path: an answer dladdr names no export at exactly (an
 * IFUNC's implementation) was taken when the object it lies in, asked
 * for the name again, gave it again. libc's l_info[DT_SYMTAB] aimed at
 * @pool, where labs's index holds an absolute symbol (SHN_ABS: dladdr
 * skips those) naming the middle of libc's labs (by the name dladdr
 * gives labs: llabs and imaxabs are the same function).
 */
static int do_cross(const char *plain)
{
	struct link_map *lm, *lc;
	void *h = open_lm(plain, &lm), *hc;
	const ElfW(Sym) *ls = NULL;
	ElfW(Dyn) **slot, *old;
	static ElfW(Dyn) fake;
	Dl_info di;
	raw_t raw;
	char *mid;
	long j;
	void *f;

	hc = h ? open_lm("libc.so.6", &lc) : NULL;
	raw = h ? (raw_t)dlsym(h, "plain_raw") : NULL;
	if (!hc || !raw)
		return 2;
	mid = (char *)raw(2) + 4;
	if (!dladdr1(raw(2), &di, (void **)&ls, RTLD_DL_SYMENT) || !ls ||
	    !(slot = info_slot(lc, DT_SYMTAB))) {
		printf("setup failed\n");
		return 2;
	}
	j = ls - (const ElfW(Sym) *)dyn_addr(lc, DT_SYMTAB);
	if (j <= 0 || j >= 4096) {
		printf("setup failed: index %ld\n", j);
		return 2;
	}
	pool[4096] = *ls;
	pool[4096].st_shndx = SHN_ABS;
	pool[4096].st_value = (uintptr_t)mid;
	fake.d_tag = DT_SYMTAB;
	fake.d_un.d_ptr = (uintptr_t)&pool[4096 - j];
	old = *slot;
	*slot = &fake;	/* the write primitive */
	f = dlsym(RTLD_DEFAULT, di.dli_sname);
	*slot = old;
	if (!f) {
		printf("setup failed: dlsym\n");
		return 2;
	}
	printf("cross %s\n", f == mid ? "plain" : "veneer");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "symtab"))
		return do_symtab(argv[2], argv[3], 0);
	if (argc == 4 && !strcmp(argv[1], "jmpveneer"))
		return do_symtab(argv[2], argv[3], 1);
	if (argc == 3 && !strcmp(argv[1], "strtab"))
		return do_strtab(argv[2], 1);
	if (argc == 3 && !strcmp(argv[1], "cross"))
		return do_cross(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "none"))
		return do_strtab(argv[2], 0);
	fprintf(stderr, "usage: protect_export symtab PLAIN COPY | jmpveneer PLAIN COPY | strtab PLAIN | none PLAIN\n");
	return 2;
}
