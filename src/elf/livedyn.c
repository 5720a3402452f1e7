// SPDX-License-Identifier: MIT
/* A loaded module's dynamic section, from memory (livedyn.h). */
#include <string.h>
#include <sys/mman.h>

#include "dyntab.h"
#include "ldenv.h"
#include "livedyn.h"

bool fi_livedyn_read(const struct dl_phdr_info *info, struct fi_livedyn *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t b = info->dlpi_addr;
	struct fi_dyntab t;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(b + p->p_vaddr);
		if (p->p_type == PT_GNU_RELRO) {
			d->relro_lo = b + p->p_vaddr;
			d->relro_hi = d->relro_lo + p->p_memsz;
		}
	}
	fi_dyn_read(dyn, SIZE_MAX, b, FI_DT(SYMTAB) | FI_DT(STRTAB) | FI_DT(RELA) |
		    FI_DT(RELASZ) | FI_DT(JMPREL) | FI_DT(PLTRELSZ) |
		    FI_DT(RELACOUNT), &t);
	d->sym = (const void *)fi_dyn_get(&t, FI_DT_SYMTAB);
	d->str = (const void *)fi_dyn_get(&t, FI_DT_STRTAB);
	d->rel[0] = (const void *)fi_dyn_get(&t, FI_DT_RELA);
	d->nrel[0] = fi_dyn_get(&t, FI_DT_RELASZ) / sizeof(ElfW(Rela));
	d->rel[1] = (const void *)fi_dyn_get(&t, FI_DT_JMPREL);
	d->nrel[1] = fi_dyn_get(&t, FI_DT_PLTRELSZ) / sizeof(ElfW(Rela));
	d->nrelative = fi_dyn_get(&t, FI_DT_RELACOUNT);
	if (d->nrelative > d->nrel[0])
		d->nrelative = d->nrel[0];
	return d->sym && d->str;
}

void fi_livedyn_store(const struct fi_livedyn *d, void **slot, void *to)
{
	uintptr_t a = (uintptr_t)slot, pg = a & ~(uintptr_t)4095;
	bool ro = a >= d->relro_lo && a < d->relro_hi;

	if (ro && mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n(slot, to, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)pg, 4096, PROT_READ);
}

/* ------------------------------------------------------------ RTLD_NEXT */

/* This object's own dynamic section (the linker's, hidden): which link
 * map is ours. NULL in an executable linked without one. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak, visibility("hidden")));

struct fi_next_tabs {
	const ElfW(Sym) *sym;
	const char *str;
	const uint32_t *gnu;
	const ElfW(Half) *versym;
	const ElfW(Verdef) *verdef;	/* the versions it defines */
	size_t nverdef;
	const char *soname;
};

static bool fi_next_tabs_of(const struct link_map *l, struct fi_next_tabs *t)
{
	struct fi_dyntab d;

	fi_dyn_read(l->l_ld, SIZE_MAX, l->l_addr, FI_DT(SYMTAB) | FI_DT(STRTAB) |
		    FI_DT(GNU_HASH) | FI_DT(VERSYM) | FI_DT(VERDEF) |
		    FI_DT(VERDEFNUM) | FI_DT(SONAME), &d);
	t->sym = (const void *)fi_dyn_get(&d, FI_DT_SYMTAB);
	t->str = (const void *)fi_dyn_get(&d, FI_DT_STRTAB);
	t->gnu = (const void *)fi_dyn_get(&d, FI_DT_GNU_HASH);
	t->versym = (const void *)fi_dyn_get(&d, FI_DT_VERSYM);
	t->verdef = (const void *)fi_dyn_get(&d, FI_DT_VERDEF);
	t->nverdef = fi_dyn_get(&d, FI_DT_VERDEFNUM);
	t->soname = NULL;
	if ((d.has & FI_DT(SONAME)) && t->str)
		t->soname = t->str + d.v[FI_DT_SONAME];
	return t->sym && t->str && t->gnu;
}

/*
 * The index the module of @t gives the version @ver it defines (in its
 * DT_VERSYM entries), 0 if it defines no version of that name.
 */
static unsigned int fi_next_verndx(const struct fi_next_tabs *t, const char *ver)
{
	const char *d = (const char *)t->verdef;

	for (size_t n = d ? t->nverdef : 0; n; n--) {
		const ElfW(Verdef) *v = (const void *)d;
		const ElfW(Verdaux) *a = (const void *)(d + v->vd_aux);

		if (!(v->vd_flags & VER_FLG_BASE) && v->vd_cnt &&
		    !strcmp(t->str + a->vda_name, ver))
			return v->vd_ndx;
		if (!v->vd_next)
			break;
		d += v->vd_next;
	}
	return 0;
}

/*
 * Does the search for @name stop at the module of @t (bias @b)? Yes when
 * the module defines it for dlsym (*@out: the address), by the loader's
 * rules for a lookup without a version (@ver NULL): a defined function,
 * object, common or untyped symbol with a value; a version hidden
 * (name@VER, not @@) or not. With @ver, as dlvsym: only the definition of
 * that version counts, hidden or not; a module without version tables
 * stops the search unsettled (the loader would take any definition of
 * it). Yes too, with *@out NULL (ask dlsym), for whatever the loader
 * would treat in a way of its own: an IFUNC (dlsym calls its resolver),
 * TLS, a unique symbol, a value the rules above do not settle, two
 * definitions at different addresses (which one dlsym returns depends on
 * its version rules), or hidden versions only. No when the module does
 * not define it.
 */
static bool fi_next_in(const struct fi_next_tabs *t, uintptr_t b,
		       const char *name, const char *ver, uint32_t h, void **out)
{
	const uint32_t *gh = t->gnu;
	uint32_t nb = gh[0], off = gh[1], nbloom = gh[2], shift = gh[3];
	const uint64_t *bloom = (const uint64_t *)(gh + 4);
	const uint32_t *bucket = gh + 4 + (size_t)nbloom * 2, *chain = bucket + nb;
	uint64_t w;
	uintptr_t at = 0;
	bool shown = false;
	unsigned int want = ~0u;	/* @ver's index, found at the first match */
	uint32_t i;

	*out = NULL;
	if (!nb)
		return false;
	if (!nbloom)
		return true;
	w = bloom[(h / 64) % nbloom];
	if (!((w >> (h % 64)) & (w >> ((h >> shift) % 64)) & 1))
		return false;
	i = bucket[h % nb];
	if (!i)
		return false;
	if (i < off)
		return true;
	for (;; i++) {
		uint32_t c = chain[i - off];
		const ElfW(Sym) *s = &t->sym[i];
		unsigned int type = ELF64_ST_TYPE(s->st_info);
		unsigned int bind = ELF64_ST_BIND(s->st_info);

		if (((c ^ h) >> 1) == 0 && !strcmp(t->str + s->st_name, name)) {
			if (ver && !t->versym)
				return true;
			if (ver && want == ~0u)
				want = fi_next_verndx(t, ver);
			if (ver && (!want || (t->versym[i] & 0x7fff) != want)) {
				/* another version: passed by */
			} else if (s->st_shndx == SHN_UNDEF) {
				if (s->st_value)
					return true;
			} else if (type == STT_GNU_IFUNC || type == STT_TLS ||
				   bind == STB_GNU_UNIQUE || s->st_shndx == SHN_ABS ||
				   (bind != STB_GLOBAL && bind != STB_WEAK)) {
				return true;
			} else if (s->st_value && (type == STT_FUNC || type == STT_OBJECT ||
						   type == STT_NOTYPE || type == STT_COMMON)) {
				if (at && at != b + s->st_value)
					return true;
				at = b + s->st_value;
				shown |= ver || !t->versym || !(t->versym[i] & 0x8000);
			}
		}
		if (c & 1)
			break;
	}
	if (!at)
		return false;
	if (!shown)
		return true;
	*out = (void *)at;
	return true;
}

/*
 * The modules after this object in the chain up to libc, with their
 * tables, kept by the first lookup that reads them all: the later ones
 * probe them without walking the chain or reading a dynamic section
 * again (the runtime's start-up asks several names, each found in libc).
 * A kept entry cannot come to name another module: every module from
 * this object to libc was loaded at start-up (dlopen appends after
 * libc), and the loader never unloads one of those, so no kept link map
 * is freed and reused by a later dlopen, and no dlclose needs to be
 * learnt of. A walk that ends before libc, or passes more modules than
 * are kept, keeps nothing. Written once (0: not yet, 1: being written,
 * 2: kept); a lookup that finds it being written walks as before. The
 * copy lies in writable memory, as the loader's link maps the walk reads
 * (and libc's dlsym too) do: no new kind of trust.
 */
#define FI_NEXT_KEEP	4

struct fi_next_mod {
	uintptr_t bias;
	struct fi_next_tabs t;
};

static struct {
	int state;
	size_t n;
	struct fi_next_mod m[FI_NEXT_KEEP];
} fi_next_kept;

static void fi_next_keep(const struct fi_next_mod *m, size_t n)
{
	int none = 0;

	if (!__atomic_compare_exchange_n(&fi_next_kept.state, &none, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	memcpy(fi_next_kept.m, m, n * sizeof(*m));
	fi_next_kept.n = n;
	__atomic_store_n(&fi_next_kept.state, 2, __ATOMIC_RELEASE);
}

/* @name in the kept modules, in order; libc, the last, ends the search. */
static void *fi_next_in_kept(const char *name, const char *ver, uint32_t h)
{
	for (size_t i = 0; i < fi_next_kept.n; i++) {
		const struct fi_next_mod *m = &fi_next_kept.m[i];
		void *p;

		if (fi_next_in(&m->t, m->bias, name, ver, h, &p))
			return p;
	}
	return NULL;
}

static void *fi_next_find(const char *name, const char *ver)
{
	const struct r_debug_extended *r = (const void *)&_r_debug;
	const struct link_map *self = NULL, *l;
	uint32_t h = fi_gnu_hash(name);
	struct fi_next_mod seen[FI_NEXT_KEEP];
	unsigned int env;
	size_t n = 0;

	/*
	 * One namespace (none of an auditor, whose symbind may change what
	 * dlsym returns; none of dlmopen): glibc (2.35 on, which this
	 * library needs) sets r_version to 2 with the second one. And no
	 * LD_DYNAMIC_WEAK.
	 */
	if (!_DYNAMIC || r->base.r_version != 1)
		return NULL;
	/* What the loader read at start-up, whatever the program set since. */
	env = fi_ldenv();
	if (!(env & FI_LDENV_READ) ||
	    (env & (FI_LDENV_AUDIT | FI_LDENV_DYNAMIC_WEAK)))
		return NULL;
	if (__atomic_load_n(&fi_next_kept.state, __ATOMIC_ACQUIRE) == 2)
		return fi_next_in_kept(name, ver, h);
	for (l = r->base.r_map; l; l = l->l_next) {
		if (l->l_ld == _DYNAMIC) {
			self = l;
			break;
		}
	}
	if (!self)
		return NULL;
	/*
	 * The objects after ours in the chain, up to libc: all loaded at
	 * start-up (dlopen appends after every one of those, libc among
	 * them), so all in the loader's main search list, in its order. The
	 * vDSO is in the chain only (no file: no '/' in its name).
	 */
	for (l = self->l_next; l; l = l->l_next) {
		struct fi_next_mod past, *m = n < FI_NEXT_KEEP ? &seen[n] : &past;
		bool libc;
		void *p;

		if (!l->l_name || !strchr(l->l_name, '/'))
			continue;
		if (!fi_next_tabs_of(l, &m->t))
			return NULL;
		m->bias = l->l_addr;
		libc = m->t.soname && !strcmp(m->t.soname, "libc.so.6");
		if (++n <= FI_NEXT_KEEP && libc)
			fi_next_keep(seen, n);
		if (fi_next_in(&m->t, m->bias, name, ver, h, &p))
			return p;
		if (libc)
			return NULL;
	}
	return NULL;
}

void *fi_livedyn_next(const char *name)
{
	return fi_next_find(name, NULL);
}

void *fi_livedyn_next_ver(const char *name, const char *ver)
{
	return fi_next_find(name, ver);
}
