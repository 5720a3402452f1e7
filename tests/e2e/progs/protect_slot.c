// SPDX-License-Identifier: MIT
/*
 * protect_slot (tests/e2e/protect_slot.sh): an attacker with a write
 * primitive forges the loader's link map of the executable (its program
 * header pointer, ld.so's writable data) so that the runtime's binding
 * pass after the next dlopen of a kCFI library reads a dynamic section,
 * relocations and a RELRO range of the attacker's making, and asks
 * fi_live_store_slot (which writes through /proc/self/mem, whatever the
 * page's protection) to store its dlsym interposer's address at the
 * attacker's "slot".
 *
 *   protect_slot state LIB   the slots straddle the read-only state's
 *                            sig.installed (two stores: the byte made 0,
 *                            the seqlock word before it left even). Then
 *                            the program installs its own SIGILL handler
 *                            and makes a confused call. Prints
 *                            "installed N" (N: the flag after the dlopen),
 *                            then "swallowed" from its handler (exit 3) if
 *                            the store landed and fineibt's handler was
 *                            evicted; otherwise the CFI report, SIGILL.
 *   protect_slot mods LIB    one aligned slot: the executable's entry in
 *                            the state's module table. Prints "mods kept"
 *                            or "mods forged", then the confused call: a
 *                            decoded report, or (forged) the one line of
 *                            a trap no registered module explains.
 *   protect_slot relro LIB   one aligned slot in libfineibt's own RELRO
 *                            (fi_rt_coarse_slot, the word coarse.S reads
 *                            the coarse table's address through): "relro
 *                            kept" or "relro forged", exit 0.
 *   protect_slot dlopen LIB PAYLOAD
 *                            one aligned slot: the executable's own GOT
 *                            slot of open (full RELRO, read-only), the
 *                            store's value the runtime's dlopen interposer
 *                            (a relocation named "dlopen"). Prints "dlopen
 *                            kept" or "dlopen forged", then calls
 *                            open(PAYLOAD, O_RDWR): "open opened", or
 *                            PAYLOAD dlopen'ed (O_RDWR is RTLD_NOW; its
 *                            constructor prints "loaded by open").
 *   protect_slot sigbind LIB LIB loaded, then its link map forged (l_ld: a
 *                            dynamic section with a relocation named
 *                            sigaction for the executable's GOT slot of
 *                            write; l_phdr: a RELRO range over it) and LIB
 *                            dlopen'ed again with RTLD_DEEPBIND, which
 *                            rebinds the SIGILL family (sigbind.c). Then
 *                            write(SIGSEGV, &sa, 0): "segv kept", or "segv
 *                            forged" when it installed sa's handler (a
 *                            sigaction through the forged slot).
 *   protect_slot sigbind_sigset LIB OFF,SIZE,SIGSET
 *                            as sigbind, the relocation named sigset, and
 *                            the runtime's record of the loader's search
 *                            list (fi_next_kept at OFF in libfineibt,
 *                            SIZE bytes; SIGSET: sigset's offset in libc)
 *                            forged so that a lookup of sigset
 *                            answers libc's write: "segv forged" when the
 *                            rebinding trusted that lookup.
 *   protect_slot none LIB    the control: no forgery, the confused call.
 *
 * Run against the test runtime (fineibt_debug_object names the state's
 * fields; the attacker is assumed to know every address).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

typedef long (*fn1_t)(long);
typedef long (*fnp_t)(const char *, long);

NOINLINE static long twice(long x) { return 2 * x; }

static fn1_t volatile op = twice;

static void own_sigill(int sig)
{
	static const char m[] = "swallowed\n";

	(void)sig;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(4);
	_exit(3);
}

/* The attacker's tables, in the executable's writable data. */
static ElfW(Phdr) fake_ph[64];
static ElfW(Dyn) fake_dyn[8];
static ElfW(Sym) fake_sym[2];
static char fake_str[] = "\0dlsym\0dlopen\0sigaction";
static ElfW(Rela) fake_rela[2];

struct fi_exe {
	const ElfW(Phdr) *ph;
	int phnum;
	uintptr_t bias;
};

static int first_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_exe *e = arg;

	(void)size;
	e->ph = info->dlpi_phdr;
	e->phnum = info->dlpi_phnum;
	e->bias = info->dlpi_addr;
	return 1;
}

/* The word of ld.so's link map holding the executable's l_phdr. */
static const ElfW(Phdr) **phdr_word(const struct fi_exe *e)
{
	struct link_map *lm = NULL;
	void *self = dlopen(NULL, RTLD_NOW);

	if (!self || dlinfo(self, RTLD_DI_LINKMAP, &lm) || !lm)
		return NULL;
	for (size_t i = 0; i < 256; i++) {
		uintptr_t *w = (uintptr_t *)lm + i;

		/* glibc: l_phdr, l_entry, then the 16-bit l_phnum */
		if (*w == (uintptr_t)e->ph &&
		    *(const uint16_t *)(w + 2) == (uint16_t)e->phnum)
			return (const ElfW(Phdr) **)w;
	}
	return NULL;
}

static bool forge_as(const struct fi_exe *e, const uintptr_t *at, size_t n,
		     uintptr_t lo, uintptr_t hi, bool dlopen_name, bool sig_name);

/* Stores of fi_dlsym_local at @at[0..n) (in that order), RELRO [lo, hi). */
static bool forge(const struct fi_exe *e, const uintptr_t *at, size_t n,
		  uintptr_t lo, uintptr_t hi, bool dlopen_name)
{
	return forge_as(e, at, n, lo, hi, dlopen_name, false);
}

/* The same tables, for module @e (its phdrs copied), relocation named
 * dlsym, dlopen or sigaction. */
static bool forge_as(const struct fi_exe *e, const uintptr_t *at, size_t n,
		     uintptr_t lo, uintptr_t hi, bool dlopen_name, bool sig_name)
{
	if (e->phnum > 64 || n > 2)
		return false;
	memcpy(fake_ph, e->ph, (size_t)e->phnum * sizeof(*e->ph));
	for (int i = 0; i < e->phnum; i++) {
		if (fake_ph[i].p_type == PT_DYNAMIC)
			fake_ph[i].p_vaddr = (uintptr_t)fake_dyn - e->bias;
		if (fake_ph[i].p_type == PT_GNU_RELRO) {
			fake_ph[i].p_vaddr = lo - e->bias;
			fake_ph[i].p_memsz = hi - lo;
		}
	}
	fake_sym[1].st_name = dlopen_name ? 7 : 1;
	(void)sig_name;
	fake_sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	fake_sym[1].st_shndx = SHN_UNDEF;
	for (size_t i = 0; i < n; i++) {
		fake_rela[i].r_offset = at[i] - e->bias;
		fake_rela[i].r_info = ELF64_R_INFO(1, R_X86_64_JUMP_SLOT);
	}
	fake_dyn[0] = (ElfW(Dyn)){ DT_SYMTAB, { (uintptr_t)fake_sym } };
	fake_dyn[1] = (ElfW(Dyn)){ DT_STRTAB, { (uintptr_t)fake_str } };
	fake_dyn[2] = (ElfW(Dyn)){ DT_STRSZ, { sizeof(fake_str) } };
	fake_dyn[3] = (ElfW(Dyn)){ DT_SYMENT, { sizeof(ElfW(Sym)) } };
	fake_dyn[4] = (ElfW(Dyn)){ DT_JMPREL, { (uintptr_t)fake_rela } };
	fake_dyn[5] = (ElfW(Dyn)){ DT_PLTRELSZ, { n * sizeof(ElfW(Rela)) } };
	fake_dyn[6] = (ElfW(Dyn)){ DT_PLTREL, { DT_RELA } };
	fake_dyn[7] = (ElfW(Dyn)){ DT_NULL, { 0 } };
	return true;
}

/* A word of libfineibt's own RELRO that points into [lo, hi), or 0. */
static uintptr_t relro_word(uintptr_t lo, uintptr_t hi)
{
	Dl_info di;
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;

	/* the state lies in libfineibt's .bss (dlsym answers a veneer
	 * for its functions, in no object) */
	if (!dladdr((void *)lo, &di) || !di.dli_fbase)
		return 0;
	eh = di.dli_fbase;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		uintptr_t a, b;

		if (ph[i].p_type != PT_GNU_RELRO)
			continue;
		a = (uintptr_t)eh + ph[i].p_vaddr;
		b = a + ph[i].p_memsz;
		for (uintptr_t p = (a + 7) & ~(uintptr_t)7; p + 8 <= b; p += 8) {
			uintptr_t v = *(const uintptr_t *)p;

			if (v >= lo && v < hi)
				return p;
		}
	}
	return 0;
}

/* The executable's GOT slot of @name (its JUMP_SLOT or GLOB_DAT), or 0. */
static uintptr_t got_slot(const struct fi_exe *e, const char *name)
{
	const ElfW(Dyn) *d = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const ElfW(Rela) *rel[2] = { NULL, NULL };
	size_t nrel[2] = { 0, 0 };

	for (int i = 0; i < e->phnum; i++) {
		if (e->ph[i].p_type == PT_DYNAMIC)
			d = (const void *)(e->bias + e->ph[i].p_vaddr);
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		uintptr_t v = d->d_un.d_ptr < e->bias ? e->bias + d->d_un.d_ptr :
						       d->d_un.d_ptr;

		if (d->d_tag == DT_SYMTAB)
			sym = (const void *)v;
		else if (d->d_tag == DT_STRTAB)
			str = (const void *)v;
		else if (d->d_tag == DT_JMPREL)
			rel[0] = (const void *)v;
		else if (d->d_tag == DT_PLTRELSZ)
			nrel[0] = d->d_un.d_val / sizeof(ElfW(Rela));
		else if (d->d_tag == DT_RELA)
			rel[1] = (const void *)v;
		else if (d->d_tag == DT_RELASZ)
			nrel[1] = d->d_un.d_val / sizeof(ElfW(Rela));
	}
	for (int t = 0; sym && str && t < 2; t++) {
		for (size_t i = 0; rel[t] && i < nrel[t]; i++) {
			uint32_t k = ELF64_R_SYM(rel[t][i].r_info);

			if (k && !strcmp(str + sym[k].st_name, name))
				return e->bias + rel[t][i].r_offset;
		}
	}
	return 0;
}

/* The module named @tail: its phdrs and bias. */
struct fi_find {
	const char *tail;
	struct fi_exe e;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_find *f = arg;
	size_t n = strlen(info->dlpi_name), t = strlen(f->tail);

	(void)size;
	if (n < t || strcmp(info->dlpi_name + n - t, f->tail))
		return 0;
	f->e.ph = info->dlpi_phdr;
	f->e.phnum = info->dlpi_phnum;
	f->e.bias = info->dlpi_addr;
	return 1;
}

/*
 * sigbind: LIB's link map made to name, as its own, a JUMP_SLOT named
 * sigaction at @slot and a RELRO range over it. Its tables lie in LIB's
 * own writable page, above its load address (the loader's d_ptr rule:
 * below it, they read as offsets).
 */
static bool forge_sig(struct link_map *lm, const struct fi_exe *e,
		      const ElfW(Phdr) **phw, uintptr_t slot, const char *name)
{
	struct tabs {
		ElfW(Phdr) ph[16];
		ElfW(Dyn) dyn[8];
		ElfW(Sym) sym[2];
		ElfW(Rela) rela[1];
		char str[16];
	} *t = NULL;

	/* The end of LIB's writable segment's last page (mapped, unused):
	 * inside LIB, as the rebinding wants its dynamic section. */
	for (int i = 0; i < e->phnum; i++) {
		const ElfW(Phdr) *p = &e->ph[i];
		uintptr_t end = e->bias + p->p_vaddr + p->p_memsz;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_W))
			t = (struct tabs *)(((end + 4095) & ~4095ul) - sizeof(*t));
	}
	if (!t || e->phnum > 16)
		return false;
	memcpy(t->ph, e->ph, (size_t)e->phnum * sizeof(*e->ph));
	for (int i = 0; i < e->phnum; i++) {
		if (t->ph[i].p_type == PT_GNU_RELRO) {
			t->ph[i].p_vaddr = slot - e->bias;
			t->ph[i].p_memsz = 8;
		}
	}
	t->str[0] = 0;
	snprintf(t->str + 1, sizeof(t->str) - 1, "%s", name);
	t->sym[1].st_name = 1;
	t->sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	t->sym[1].st_shndx = SHN_UNDEF;
	t->rela[0].r_offset = slot - e->bias;
	t->rela[0].r_info = ELF64_R_INFO(1, R_X86_64_JUMP_SLOT);
	t->dyn[0] = (ElfW(Dyn)){ DT_SYMTAB, { (uintptr_t)t->sym } };
	t->dyn[1] = (ElfW(Dyn)){ DT_STRTAB, { (uintptr_t)t->str } };
	t->dyn[2] = (ElfW(Dyn)){ DT_JMPREL, { (uintptr_t)t->rela } };
	t->dyn[3] = (ElfW(Dyn)){ DT_PLTRELSZ, { sizeof(t->rela) } };
	t->dyn[4] = (ElfW(Dyn)){ DT_NULL, { 0 } };
	lm->l_ld = t->dyn;
	*phw = t->ph;
	return true;
}

/* The word of @lm holding l_phdr @ph (l_phnum @phnum follows l_entry). */
static const ElfW(Phdr) **phdr_word_of(struct link_map *lm,
				       const ElfW(Phdr) *ph, int phnum)
{
	for (size_t i = 0; i < 256; i++) {
		uintptr_t *w = (uintptr_t *)lm + i;

		if (*w == (uintptr_t)ph && *(const uint16_t *)(w + 2) == (uint16_t)phnum)
			return (const ElfW(Phdr) **)w;
	}
	return NULL;
}

static void pwned(int sig)
{
	(void)sig;
	_exit(6);
}

/*
 * sigbind_sigset: the runtime's record of the loader's search list
 * (livedyn.c's fi_next_kept, @off from libfineibt's base, @size bytes:
 * its symbol table), where libc's load address is made what a lookup of
 * sigset (at @ss in libc) turns into @want. Returns the word, or NULL.
 * (Offsets from the symbol tables: a dlsym here gets the runtime's
 * interposer's answer, a veneer.)
 */
static uintptr_t *forge_kept(uintptr_t off, uintptr_t size, uintptr_t ss,
			     uintptr_t want, uintptr_t *was)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *rt = dlopen("libfineibt.so.0", RTLD_NOW | RTLD_NOLOAD);
	struct link_map *lm = NULL, *rlm = NULL;

	if (!libc || dlinfo(libc, RTLD_DI_LINKMAP, &lm) || !lm ||
	    !rt || dlinfo(rt, RTLD_DI_LINKMAP, &rlm) || !rlm)
		return NULL;
	for (uintptr_t a = rlm->l_addr + off; a + sizeof(uintptr_t) <= rlm->l_addr + off + size;
	     a += sizeof(uintptr_t)) {
		uintptr_t *p = (uintptr_t *)a;

		if (*p == lm->l_addr) {
			*was = *p;
			*p = want - ss;
			return p;
		}
	}
	return NULL;
}

/* protect_slot sigbind LIB: see the top of the file. */
static int do_sigbind(const struct fi_exe *exe, const char *lib,
		      const char *kept)
{
	uintptr_t *bias = NULL, bias_was = 0, koff = 0, ksize = 0, ss = 0;
	struct fi_find f = { .tail = strrchr(lib, '/') ? strrchr(lib, '/') : lib };
	struct sigaction sa = { .sa_handler = pwned }, old;
	struct link_map *lm = NULL;
	const ElfW(Phdr) **phw, *ph_was;
	ElfW(Dyn) *ld_was;
	uintptr_t slot = got_slot(exe, "write");
	void *h = dlopen(lib, RTLD_NOW);

	if (!h || !slot || dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm ||
	    !dl_iterate_phdr(find_cb, &f) ||
	    !(phw = phdr_word_of(lm, f.e.ph, f.e.phnum)))
		return 2;
	ld_was = lm->l_ld;
	ph_was = *phw;
	if (!forge_sig(lm, &f.e, phw, slot, kept ? "sigset" : "sigaction"))
		return 2;	/* the write primitive */
	if (kept && (sscanf(kept, "%lx,%lx,%lx", &koff, &ksize, &ss) != 3 ||
		     !(bias = forge_kept(koff, ksize, ss, *(uintptr_t *)slot,
					 &bias_was))))
		return 2;
	h = dlopen(lib, RTLD_NOW | RTLD_DEEPBIND);
	lm->l_ld = ld_was;
	*phw = ph_was;
	if (bias)
		*bias = bias_was;
	if (!h)
		return 2;
	sigemptyset(&sa.sa_mask);
	/* A direct call through the GOT: write(SIGSEGV, &sa, 0). */
	if (write(SIGSEGV, &sa, 0) < 0)
		(void)0;
	sigaction(SIGSEGV, NULL, &old);
	/* sigaction(SIGSEGV, &sa, 0) installs pwned, sigset(SIGSEGV, &sa)
	 * the address of sa. */
	printf("segv %s\n", old.sa_handler == pwned ||
	       old.sa_handler == (void (*)(int))(void *)&sa ? "forged" : "kept");
	return 0;
}

int main(int argc, char **argv)
{
	const void *(*dbg)(const char *) =
		(const void *(*)(const char *))dlsym(RTLD_DEFAULT,
						     "fineibt_debug_object");
	struct sigaction sa = { .sa_handler = own_sigill };
	const char *what = argc == 3 || argc == 4 ? argv[1] : "";
	const ElfW(Phdr) **word, *was;
	struct fi_exe e = { 0 };
	uintptr_t at[2], lo = 0, hi = 0, slot = 0, old = 0;
	size_t n = 0;
	void *h;
	fnp_t f;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 3 || argc > 4 || !dbg) {
		fprintf(stderr, "usage: protect_slot none|state|mods|relro LIB "
			"(against the test runtime)\n");
		return 2;
	}
	dl_iterate_phdr(first_cb, &e);
	if (!strcmp(what, "sigbind"))
		return do_sigbind(&e, argv[2], NULL);
	if (!strcmp(what, "sigbind_sigset") && argc == 4)
		return do_sigbind(&e, argv[2], argv[3]);
	word = phdr_word(&e);
	if (!word) {
		fprintf(stderr, "protect_slot: the link map's l_phdr not found\n");
		return 2;
	}
	if (!strcmp(what, "state")) {
		uintptr_t inst = (uintptr_t)dbg("sigill_installed");

		if (!inst || !*(const bool *)inst)
			return 2;
		/* installed = byte 7 of the first store (0); the seqlock
		 * word before it gets bytes 6, 7 of the second (0, 0). */
		at[0] = inst - 7;
		at[1] = inst - 10;
		n = 2;
		lo = inst - 10;
		hi = inst + 1;
	} else if (!strcmp(what, "mods")) {
		const void *const *mods = dbg("mods");
		const void *m = dbg("module");

		for (size_t i = 0; mods && m && i < 1024 && !slot; i++) {
			if (mods[i] == m)
				slot = (uintptr_t)&mods[i];
		}
	} else if (!strcmp(what, "dlopen")) {
		slot = got_slot(&e, "open");
	} else if (!strcmp(what, "relro")) {
		uintptr_t st = (uintptr_t)dbg("state");

		slot = st ? relro_word(st, st + 3 * 4096) : 0;
	} else if (strcmp(what, "none")) {
		return 2;
	}
	if (slot) {
		at[0] = slot;
		n = 1;
		lo = slot;
		hi = slot + 8;
		old = *(const uintptr_t *)slot;
	} else if (!n && strcmp(what, "none")) {
		fprintf(stderr, "protect_slot: no %s word found\n", what);
		return 2;
	}
	if (n && !forge(&e, at, n, lo, hi, !strcmp(what, "dlopen")))
		return 2;
	was = *word;
	if (n)
		*word = fake_ph;	/* the write primitive */
	h = dlopen(argv[2], RTLD_NOW);
	*word = was;
	if (!h) {
		fprintf(stderr, "protect_slot: %s\n", dlerror());
		return 2;
	}
	if (!strcmp(what, "state"))
		printf("installed %d\n", *(const bool *)dbg("sigill_installed"));
	if (slot)
		printf("%s %s\n", what,
		       *(const uintptr_t *)slot == old ? "kept" : "forged");
	if (!strcmp(what, "relro"))
		return 0;	/* the coarse check would read code as its table */
	if (!strcmp(what, "dlopen")) {
		/* A direct call through the GOT: no check in any mode. Its
		 * second argument, O_RDWR, is RTLD_NOW to dlopen. */
		int fd = open(argc == 4 ? argv[3] : argv[2], O_RDWR);

		printf("open %s\n", fd >= 0 ? "opened" : "failed");
		return 0;
	}
	sigaction(SIGILL, &sa, NULL);
	f = (fnp_t)(void *)op;
	printf("result %ld\n", f("confused", 1));
	puts("survived");
	return 0;
}
