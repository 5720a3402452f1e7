// SPDX-License-Identifier: MIT
/*
 * Reading a loaded module from memory only: the runtime's start-up path
 * for modules built by fineibt-cc (docs/index.md).
 *
 * The program headers (from dl_iterate_phdr) give the segments; the index
 * note crt/index.S put in a PT_NOTE segment gives where the module's
 * __patchable_function_entries and .kcfi_traps are and where its own
 * indirect thunks are. Both sections are allocated, so they are in memory
 * already, relocated: the entries hold run-time addresses. Discovery then
 * runs on the live text exactly as for a module read from its file
 * (elf_sites.c), so the sites, hashes and arity are the same.
 *
 * What the image lacks compared with one read from the file: symbols
 * (reports read them lazily, src/elf/symfile.c), __kcfi_typeid_ symbols
 * (the runtime does not use them), __cfi_ symbols (every module linked
 * by fineibt-cc has patchable entries), naked ENDBRs (only `fineibt
 * inspect` lists them) and the .fineibt note of a statically patched file
 * (start.c reads the file when the sites are not in compiler form).
 *
 * Every range is checked against the module's readable segments before it
 * is read: nothing here can fault on a well-loaded module.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cacheid.h"
#include "dyntab.h"
#include "elf_int.h"
#include "imgindex.h"
#include "index.h"
#include "note.h"
#include "rawsys.h"

/*
 * Functions sampled by fi_live_maybe_kcfi: from the unwind search table,
 * the FI_PROBE_FDES lowest function entries of the text; without one, or
 * when they do not all lie in the first 64 KiB of the text,
 * FI_PROBE_SYMS exported functions whose entry lies there (else the 16
 * lowest-addressed ones).
 */
#define FI_PROBE_FDES	32
#define FI_PROBE_SYMS	16
#define FI_PROBE_SPAN	(64u * 1024)

static bool fi_ix_fail(char *err, size_t errlen, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return false;
}

/* Is run-time [a, a + len) inside one readable PT_LOAD of the module? */
static bool fi_ix_mapped(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			 uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < phnum; i++) {
		uint64_t lo = ph[i].p_vaddr + bias;

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & (PF_R | PF_X)))
			continue;
		if (a >= lo && a - lo <= ph[i].p_memsz &&
		    len <= ph[i].p_memsz - (a - lo))
			return true;
	}
	return false;
}

static uint32_t fi_ix_word(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * A descriptor of @descsz bytes whose first word is @version: the sizes
 * go with the versions, so that a reader never reads past a version 1
 * note (22 words) for the list version 2 adds.
 */
static bool fi_ix_size_ok(uint32_t version, uint32_t descsz)
{
	return (version == FI_INDEX_VERSION && descsz == FI_INDEX_DESCSZ) ||
	       (version == FI_INDEX_VERSION_1 && descsz == FI_INDEX_DESCSZ_1);
}

/* Is the note's descriptor (@descsz bytes, first word @version) one of
 * type @type we read? */
static bool fi_ix_desc_ok(uint32_t type, uint32_t want, uint32_t version,
			  uint32_t descsz)
{
	if (type != want)
		return false;
	if (want == FI_INDEX_TYPE)
		return fi_ix_size_ok(version, descsz);
	return version == FI_NEXT_VERSION && descsz == FI_NEXT_DESCSZ;
}

/* The notes of one PT_NOTE segment: our note of type @want, or NULL. */
static const uint32_t *fi_ix_scan_type(const uint8_t *p, uint64_t size,
				       uint32_t want)
{
	uint64_t at = 0;

	while (size - at >= 12) {
		uint32_t namesz = fi_ix_word(p + at), descsz = fi_ix_word(p + at + 4);
		uint32_t type = fi_ix_word(p + at + 8);
		uint64_t name = at + 12;
		uint64_t desc = name + (((uint64_t)namesz + 3) & ~3ull);

		if (desc > size || descsz > size - desc)
			return NULL;
		if (descsz >= 4 && namesz == FI_INDEX_NAMESZ &&
		    fi_ix_desc_ok(type, want, fi_ix_word(p + desc), descsz) &&
		    !memcmp(p + name, FI_INDEX_NAME, FI_INDEX_NAMESZ) &&
		    !((uintptr_t)(p + desc) & 3))
			return (const uint32_t *)(p + desc);
		at = desc + (((uint64_t)descsz + 3) & ~3ull);
	}
	return NULL;
}

/* The notes of one PT_NOTE segment: our index, or NULL. */
static const uint32_t *fi_ix_scan_notes(const uint8_t *p, uint64_t size)
{
	return fi_ix_scan_type(p, size, FI_INDEX_TYPE);
}

/*
 * The .fineibt record as the index holds it (src/elf/index.h): its first
 * FI_IX_REC_HEAD bytes and its key; the counts between them stay in the
 * file's section.
 */
#define FI_IX_REC_HEAD	32
#define FI_IX_REC_KEY	(FI_NOTE_SIZE - FI_NOTE_KEY)
_Static_assert(FI_IX_REC_HEAD <= FI_NOTE_KEY &&
	       FI_IX_REC_HEAD + FI_IX_REC_KEY <= FI_INDEX_RECORD_MAX,
	       "the .fineibt record's header and key fit in the module index");

/* The record of a PATCHED index, as fi_note_decode reads a section. */
static int fi_ix_record(const uint32_t *desc, struct fi_note *n)
{
	const uint8_t *w = (const uint8_t *)&desc[FI_INDEX_W_RECORD];
	uint8_t rec[FI_NOTE_SIZE] = { 0 };

	memcpy(rec, w, FI_IX_REC_HEAD);
	memcpy(rec + FI_NOTE_KEY, w + FI_IX_REC_HEAD, FI_IX_REC_KEY);
	return fi_note_decode(rec, sizeof(rec), n);
}

int fi_index_set_record(uint8_t *note, size_t size, const void *rec,
			size_t len)
{
	const uint32_t *d;
	uint32_t flags;
	uint8_t *w;

	if ((uintptr_t)note & 3)
		return -1;
	d = fi_ix_scan_notes(note, size);
	if (!d)
		return -1;
	/* The descriptor lies inside @note: write through our own pointer. */
	w = note + ((const uint8_t *)d - note);
	flags = d[FI_INDEX_W_FLAGS];
	if (d[FI_INDEX_W_VERSION] != FI_INDEX_VERSION ||
	    !(flags & FI_INDEX_FILLED) || len != FI_NOTE_SIZE) {
		flags = 0;
		memcpy(w + FI_INDEX_W_FLAGS * 4, &flags, sizeof(flags));
		return 0;
	}
	/*
	 * The words of the thunk-call list hold the record now: without the
	 * list discovery scans the text for such calls (a patched module is
	 * not rewritten again, so nothing depends on them but that scan).
	 */
	flags = (flags | FI_INDEX_PATCHED) & ~(uint32_t)FI_INDEX_TCALL_LIST;
	memset(w + FI_INDEX_W_RECORD * 4, 0, FI_INDEX_RECORD_MAX);
	memcpy(w + FI_INDEX_W_RECORD * 4, rec, FI_IX_REC_HEAD);
	memcpy(w + FI_INDEX_W_RECORD * 4 + FI_IX_REC_HEAD,
	       (const uint8_t *)rec + FI_NOTE_KEY, FI_IX_REC_KEY);
	memcpy(w + FI_INDEX_W_FLAGS * 4, &flags, sizeof(flags));
	return 1;
}

static const uint32_t *fi_ix_find_type(const Elf64_Phdr *ph, size_t phnum,
				       uint64_t bias, uint32_t want)
{
	for (size_t i = 0; i < phnum; i++) {
		const uint32_t *d;

		if (ph[i].p_type != PT_NOTE || !ph[i].p_filesz ||
		    !fi_ix_mapped(ph, phnum, bias, ph[i].p_vaddr + bias,
				  ph[i].p_filesz))
			continue;
		d = fi_ix_scan_type((const uint8_t *)(uintptr_t)
				    (ph[i].p_vaddr + bias), ph[i].p_filesz,
				    want);
		if (d)
			return d;
	}
	return NULL;
}

const uint32_t *fi_index_find(const Elf64_Phdr *ph, size_t phnum,
			      uint64_t bias)
{
	return fi_ix_find_type(ph, phnum, bias, FI_INDEX_TYPE);
}

/* Does some PT_LOAD with all of @flags hold [a, a + len)? */
static bool fi_ix_in_seg(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			 uint32_t flags, uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < phnum; i++) {
		uint64_t lo = ph[i].p_vaddr + bias;

		if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & flags) != flags)
			continue;
		if (a >= lo && a - lo <= ph[i].p_memsz &&
		    len <= ph[i].p_memsz - (a - lo))
			return true;
	}
	return false;
}

/* Is [a, a + len) inside the module's PT_GNU_RELRO? */
static bool fi_ix_in_relro(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			   uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < phnum; i++) {
		uint64_t lo = ph[i].p_vaddr + bias;

		if (ph[i].p_type == PT_GNU_RELRO && a >= lo &&
		    a - lo <= ph[i].p_memsz && len <= ph[i].p_memsz - (a - lo))
			return true;
	}
	return false;
}

/* The run-time address at descriptor word @w of @d. */
static uint64_t fi_ix_off(const uint32_t *d, size_t w)
{
	return (uint64_t)(uintptr_t)d + (uint64_t)(int64_t)(int32_t)d[w];
}

/* A GOT slot of the note: 8-byte aligned, in RELRO, in a data PT_LOAD. */
static bool fi_ix_slot_ok(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			  uint64_t s)
{
	return !(s & 7) && fi_ix_in_relro(ph, phnum, bias, s, 8) &&
	       fi_ix_in_seg(ph, phnum, bias, PF_R | PF_W, s, 8);
}

bool fi_next_find(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
		  struct fi_next_note *n)
{
	const uint32_t *d = fi_ix_find_type(ph, phnum, bias, FI_NEXT_TYPE);
	uint64_t e, s0, s1;

	if (!d)
		return false;
	e = fi_ix_off(d, FI_NEXT_W_ENTRY);
	s0 = fi_ix_off(d, FI_NEXT_W_DLSYM);
	s1 = fi_ix_off(d, FI_NEXT_W_DLVSYM);
	if (!fi_ix_in_seg(ph, phnum, bias, PF_R | PF_X, e, 16) ||
	    !fi_ix_slot_ok(ph, phnum, bias, s0) ||
	    !fi_ix_slot_ok(ph, phnum, bias, s1))
		return false;
	n->entry = (const void *)(uintptr_t)e;
	n->slot[0] = (void *const *)(uintptr_t)s0;
	n->slot[1] = (void *const *)(uintptr_t)s1;
	return true;
}

/* ------------------------------------------------------------- image */

static int fi_ix_cmp_view(const void *a, const void *b)
{
	const struct fi_view *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* One view per PT_LOAD, as fi_image_open_live makes them. */
static int fi_ix_views(struct fi_image *im, const Elf64_Phdr *ph,
		       size_t phnum, char *err, size_t errlen)
{
	bool exec = false;

	im->views = calloc(phnum ? phnum : 1, sizeof(*im->views));
	if (!im->views)
		return fi_ix_fail(err, errlen, "out of memory"), -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		struct fi_view *v = &im->views[im->nviews];

		if (ph[i].p_type == PT_INTERP)
			im->interp = true;
		if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
			continue;
		if (ph[i].p_vaddr + im->bias + ph[i].p_memsz <
		    ph[i].p_vaddr + im->bias)
			return fi_ix_fail(err, errlen, "segment wraps the "
					  "address space"), -EINVAL;
		v->vaddr = ph[i].p_vaddr;
		v->size = (ph[i].p_flags & (PF_R | PF_X)) ? ph[i].p_memsz : 0;
		v->mem = (uint8_t *)(uintptr_t)(ph[i].p_vaddr + im->bias);
		v->exec = ph[i].p_flags & PF_X;
		exec |= v->exec && v->size;
		im->nviews++;
	}
	if (!exec)
		return fi_ix_fail(err, errlen, "no executable segment"), -ENOEXEC;
	qsort(im->views, im->nviews, sizeof(*im->views), fi_ix_cmp_view);
	return 0;
}

/* Run-time address of the range at word @w of @desc, or 0 if none. */
static uint64_t fi_ix_range(const uint32_t *desc, size_t w, uint64_t *size)
{
	int32_t off = (int32_t)desc[w];

	*size = desc[w + 1];
	if (!*size)
		return 0;
	return (uint64_t)(uintptr_t)desc + (uint64_t)(int64_t)off;
}

static bool fi_ix_in_text(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			  uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < phnum; i++) {
		uint64_t lo = ph[i].p_vaddr + bias;

		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    a >= lo && a - lo <= ph[i].p_memsz &&
		    len <= ph[i].p_memsz - (a - lo))
			return true;
	}
	return false;
}

/*
 * The executable segment holding byte @a, as run-time [*lo, *hi): false if
 * none. Entries come sorted, so the caller asks the last answer first.
 */
static bool fi_ix_text_seg(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			   uint64_t a, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < phnum; i++) {
		uint64_t l = ph[i].p_vaddr + bias;

		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    a >= l && a - l < ph[i].p_memsz) {
			*lo = l;
			*hi = l + ph[i].p_memsz;
			return true;
		}
	}
	return false;
}

/* The run-time hull of the executable segments: [*lo, *hi). */
static void fi_ix_text_hull(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			    uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < phnum; i++) {
		uint64_t a = ph[i].p_vaddr + bias;

		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		*lo = a < *lo ? a : *lo;
		*hi = a + ph[i].p_memsz > *hi ? a + ph[i].p_memsz : *hi;
	}
}

/* The tags of @want of the module's dynamic section (none without one). */
static void fi_ix_dyn(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
		      uint64_t want, struct fi_dyntab *t)
{
	const Elf64_Dyn *d = NULL;
	size_t nd = 0;

	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC &&
		    fi_ix_mapped(ph, phnum, bias, ph[i].p_vaddr + bias,
				 ph[i].p_memsz)) {
			d = (const Elf64_Dyn *)(uintptr_t)(ph[i].p_vaddr + bias);
			nd = ph[i].p_memsz / sizeof(*d);
		}
	}
	fi_dyn_read(d, nd, bias, want, t);
}

/* What fi_ix_dynsym reads of the dynamic section. */
#define FI_IX_DYNSYM	(FI_DT(SYMTAB) | FI_DT(HASH) | FI_DT(GNU_HASH))

/* Number of dynamic symbols from DT_GNU_HASH, or 0. */
static size_t fi_ix_gnu_count(const Elf64_Phdr *ph, size_t phnum,
			      uint64_t bias, uint64_t at)
{
	const uint32_t *h = (const uint32_t *)(uintptr_t)at;
	uint32_t nb, off, nbloom;
	const uint32_t *bucket, *chain;
	uint32_t last = 0;

	if (!fi_ix_mapped(ph, phnum, bias, at, 16))
		return 0;
	nb = h[0];
	off = h[1];
	nbloom = h[2];
	bucket = h + 4 + (size_t)nbloom * 2;
	if (nbloom > (1u << 20) || nb > (1u << 24) ||
	    !fi_ix_mapped(ph, phnum, bias, (uint64_t)(uintptr_t)bucket,
			  (uint64_t)nb * 4))
		return 0;
	for (uint32_t i = 0; i < nb; i++)
		last = bucket[i] > last ? bucket[i] : last;
	if (last < off)
		return off;
	chain = bucket + nb;
	while (fi_ix_mapped(ph, phnum, bias,
			    (uint64_t)(uintptr_t)&chain[last - off], 4) &&
	       !(chain[last - off] & 1))
		last++;
	return (size_t)last + 1;
}

/* The dynamic symbol table and its size (@t: FI_IX_DYNSYM read), or false. */
static bool fi_ix_dynsym(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			 const struct fi_dyntab *t, const Elf64_Sym **sym,
			 size_t *n)
{
	uint64_t symtab = fi_dyn_get(t, FI_DT_SYMTAB);
	uint64_t hash = fi_dyn_get(t, FI_DT_HASH);
	uint64_t gnu = fi_dyn_get(t, FI_DT_GNU_HASH);

	*n = 0;
	if (hash && fi_ix_mapped(ph, phnum, bias, hash, 8))
		*n = ((const uint32_t *)(uintptr_t)hash)[1];
	else if (gnu)
		*n = fi_ix_gnu_count(ph, phnum, bias, gnu);
	if (!symtab || !*n ||
	    !fi_ix_mapped(ph, phnum, bias, symtab, *n * sizeof(Elf64_Sym)))
		return false;
	*sym = (const Elf64_Sym *)(uintptr_t)symtab;
	return true;
}

/*
 * The link-time value a dynamic relocation @r gives its place: the
 * addend of a RELATIVE one, symbol + addend of an absolute one against a
 * symbol the module defines (@sym, @nsym of them: 0 if the module's
 * table cannot be read). False for anything else (the module's file
 * must tell).
 */
static bool fi_ix_rela_value(const Elf64_Sym *sym, size_t nsym,
			     const Elf64_Rela *r, uint64_t *v)
{
	size_t k = ELF64_R_SYM(r->r_info);

	if (ELF64_R_TYPE(r->r_info) == R_X86_64_RELATIVE) {
		*v = (uint64_t)r->r_addend;
		return true;
	}
	if (ELF64_R_TYPE(r->r_info) != R_X86_64_64 || !k || k >= nsym ||
	    sym[k].st_shndx == SHN_UNDEF)
		return false;
	*v = sym[k].st_value + (uint64_t)r->r_addend;
	return true;
}

/*
 * Entries [@lo, @lo + 8 * @n) (link-time) that dynamic relocations write:
 * their link-time values into @val, @set marks them. -EAGAIN if one
 * cannot be worked out from memory.
 */
static int fi_ix_entries_rela(const Elf64_Phdr *ph, size_t phnum,
			      uint64_t bias, uint64_t lo, size_t n,
			      uint64_t *val, uint8_t *set)
{
	const Elf64_Sym *sym = NULL;
	uint64_t rela, relasz, relaent = sizeof(Elf64_Rela);
	size_t nsym = 0;
	bool symread = false;
	struct fi_dyntab t;

	fi_ix_dyn(ph, phnum, bias, FI_DT(RELA) | FI_DT(RELASZ) | FI_DT(RELAENT) |
		  FI_DT(REL) | FI_IX_DYNSYM, &t);
	if (t.has & FI_DT(REL))
		return -EAGAIN;	/* not an x86-64 RELA module */
	rela = fi_dyn_get(&t, FI_DT_RELA);
	relasz = fi_dyn_get(&t, FI_DT_RELASZ);
	if (t.has & FI_DT(RELAENT))
		relaent = t.v[FI_DT_RELAENT];
	if (!rela || !relasz)
		return 0;
	if (relaent != sizeof(Elf64_Rela) || relasz % relaent ||
	    !fi_ix_mapped(ph, phnum, bias, rela, relasz))
		return -EAGAIN;
	for (uint64_t off = 0; off < relasz; off += relaent) {
		const Elf64_Rela *r = (const void *)(uintptr_t)(rela + off);
		uint64_t at = r->r_offset - lo;

		if (r->r_offset < lo || at >= (uint64_t)n * 8)
			continue;
		/* The symbol table once, for the first absolute one. */
		if (ELF64_R_TYPE(r->r_info) == R_X86_64_64 && !symread) {
			symread = true;
			if (!fi_ix_dynsym(ph, phnum, bias, &t, &sym, &nsym))
				nsym = 0;
		}
		if (at % 8 || !fi_ix_rela_value(sym, nsym, r, &val[at / 8]))
			return -EAGAIN;
		set[at / 8] = 1;
	}
	return 0;
}

/*
 * The entries of a module the loader has not relocated yet (the early
 * start of early.c runs while it relocates libfineibt.so, an LD_AUDIT
 * hook before it relocates the module), or whose places cannot tell
 * (a load bias smaller than the text): their link-time values, from
 * memory still. A place a RELA relocation writes takes that relocation's
 * value (lld leaves such places zero); any other holds its value in
 * place: link-time while unrelocated (DT_RELR keeps it there, so does
 * --apply-dynamic-relocs or a BFD link), run-time once relocated, told
 * apart by which of the two lies in the text. A sorted copy
 * (elf->entries, as read from the file), 8 bytes per entry until the
 * image is closed. -EAGAIN when memory cannot tell: the file can.
 */
static int fi_ix_entries_link(struct fi_image *im, const Elf64_Phdr *ph,
			      size_t phnum, uint64_t at, size_t n)
{
	uint64_t *val = calloc(n + 1, sizeof(*val));
	uint8_t *set = calloc(n + 1, 1);
	size_t out = 0;
	int ret = -ENOMEM;

	if (!val || !set)
		goto fail;
	ret = fi_ix_entries_rela(ph, phnum, im->bias, at - im->bias, n, val, set);
	for (size_t i = 0; !ret && i < n; i++) {
		uint64_t v = val[i];
		bool run, link;

		if (!set[i]) {
			memcpy(&v, (const uint8_t *)(uintptr_t)at + i * 8, 8);
			/* Zero (or bias + 0): an entry of a discarded function. */
			if (!v || v == im->bias)
				continue;
			run = fi_ix_in_text(ph, phnum, im->bias, v, 1);
			link = fi_ix_in_text(ph, phnum, im->bias, v + im->bias, 1);
			if (run == link)
				ret = -EAGAIN;
			v = run ? v - im->bias : v;
		}
		if (v)
			val[out++] = v;
	}
	if (!ret && n && !out)
		ret = -EAGAIN;
	if (ret)
		goto fail;
	free(set);
	fi_sort_u64(val, out);
	im->elf->entries = val;
	im->elf->nentries = fi_dedup_u64(val, out);
	return 0;
fail:
	free(val);
	free(set);
	return ret;
}

/*
 * __patchable_function_entries, func - 11 each, read in place: relocated
 * in memory, or link-time values no relocation writes (the index says
 * FI_INDEX_PFE_LINK, docs/index.md "Entries at link-time values"). Not
 * relocated yet, or not known to be: fi_ix_entries_link.
 */
static int fi_ix_entries(struct fi_image *im, const Elf64_Phdr *ph,
			 size_t phnum, const uint32_t *desc,
			 char *err, size_t errlen)
{
	uint64_t size, at = fi_ix_range(desc, FI_INDEX_W_PFE, &size);
	const uint8_t *p = (const uint8_t *)(uintptr_t)at;
	size_t n = size / 8, out = 0;
	bool linked = desc[FI_INDEX_W_FLAGS] & FI_INDEX_PFE_LINK;
	/* What a value lacks of its run-time address; a discarded one's. */
	uint64_t add = linked ? im->bias : 0, gone = linked ? 0 : im->bias;
	uint64_t lo, hi, seg_lo, seg_hi;
	int ret;

	if (at && (size % 8 || !fi_ix_mapped(ph, phnum, im->bias, at, size)))
		return fi_ix_fail(err, errlen, "bad __patchable_function_entries "
				  "range in the module index"), -ENOEXEC;
	/*
	 * A run-time address in the text is never a link-time one there
	 * too unless the bias is smaller than the text: only then can a
	 * place not tell by its value alone whether it was relocated.
	 */
	fi_ix_text_hull(ph, phnum, im->bias, &lo, &hi);
	if (at && !linked && im->bias && lo < hi && im->bias < hi - lo)
		goto link;
	seg_lo = 1;
	seg_hi = 0;
	for (size_t i = 0; at && i < n; i++) {
		uint64_t v;

		memcpy(&v, p + i * 8, 8);
		/* Zero (or bias + 0): an entry of a discarded function. */
		if (!v || v == gone)
			continue;
		/* [seg_lo, seg_hi): the last segment, in the values' terms */
		if (!(v >= seg_lo && v < seg_hi)) {
			if (!fi_ix_text_seg(ph, phnum, im->bias, v + add,
					    &seg_lo, &seg_hi))
				goto link;
			seg_lo -= add;
			seg_hi -= add;
		}
		out++;
	}
	if (n && !out)
		goto link;
	/* Read where it is by discovery (elf_sites.c): no sorted copy. */
	im->elf->pfe = at ? p : NULL;
	im->elf->npfe = at ? n : 0;
	im->elf->pfe_linked = linked;
	return 0;
link:
	/* Link-time values the text does not hold: the file decides. */
	if (linked)
		return -EAGAIN;
	ret = fi_ix_entries_link(im, ph, phnum, at, n);
	if (ret == -ENOMEM)
		fi_ix_fail(err, errlen, "out of memory");
	return ret;
}

/*
 * Is run-time [a, a + len) inside one PT_LOAD that is only readable? No
 * write bit (so neither RELRO nor data), no execute bit (the runtime
 * swaps executable segments for rewritten copies).
 */
static bool fi_ix_readonly(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			   uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < phnum; i++) {
		uint64_t lo = ph[i].p_vaddr + bias;

		if (ph[i].p_type == PT_LOAD &&
		    (ph[i].p_flags & (PF_R | PF_W | PF_X)) == PF_R &&
		    a >= lo && a - lo <= ph[i].p_filesz &&
		    len <= ph[i].p_filesz - (a - lo))
			return true;
	}
	return false;
}

/*
 * The trap handler may read .kcfi_traps where the loader mapped it when
 * the program cannot write it there (a read-only segment) and a binary
 * search works on it (targets strictly increasing: true of every module
 * the linker lays out in section order; checked, else a sorted copy).
 */
static bool fi_ix_traps_in_place(struct fi_image *im, const Elf64_Phdr *ph,
				 size_t phnum, uint64_t at, uint64_t size)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)at;
	size_t n = size / 4;
	int64_t prev;
	bool bad;

	if (!fi_ix_readonly(ph, phnum, im->bias, at, size))
		return false;
	/*
	 * Strictly increasing targets (fi_trap_at's, link-time): entry i
	 * aims at (at - bias) + 4i + rel[i], so each rel[i] + 4 > rel[i - 1]
	 * (64-bit sums: no overflow) and the first target is not below 0
	 * (none wraps). One load, add and compare an entry, without a
	 * branch (SSE2's emulated 64-bit compares cost more): a library of
	 * 8,000 sites reads its table at every start, a hit too.
	 */
	prev = n ? (int32_t)fi_ix_word(p) : 0;
	bad = (int64_t)(at - im->bias) + prev < 0;
#pragma clang loop vectorize(disable)
	for (size_t i = 1; i < n; i++) {
		int64_t rel = (int32_t)fi_ix_word(p + 4 * i);

		bad |= rel + 4 <= prev;
		prev = rel;
	}
	if (bad)
		return false;
	im->ktraps = p;
	im->nktraps = n;
	return true;
}

/* .kcfi_traps: each entry is relative to its own address. */
static int fi_ix_traps(struct fi_image *im, const Elf64_Phdr *ph,
		       size_t phnum, const uint32_t *desc,
		       char *err, size_t errlen)
{
	uint64_t size, at = fi_ix_range(desc, FI_INDEX_W_TRAPS, &size);
	const uint8_t *p = (const uint8_t *)(uintptr_t)at;
	size_t n = size / 4;

	if (at && (size % 4 || !fi_ix_mapped(ph, phnum, im->bias, at, size)))
		return fi_ix_fail(err, errlen, "bad .kcfi_traps range in the "
				  "module index"), -ENOEXEC;
	if (at && fi_ix_traps_in_place(im, ph, phnum, at, size))
		return 0;
	im->traps = calloc(n ? n : 1, sizeof(*im->traps));
	if (!im->traps)
		return fi_ix_fail(err, errlen, "out of memory"), -ENOMEM;
	for (size_t i = 0; at && i < n; i++) {
		int32_t rel = (int32_t)fi_ix_word(p + i * 4);

		im->traps[im->ntraps++] = at - im->bias + i * 4 +
					  (uint64_t)(int64_t)rel;
	}
	fi_sort_u64(im->traps, im->ntraps);
	im->ntraps = fi_dedup_u64(im->traps, im->ntraps);
	return 0;
}

/* The module's own thunks, link-time; only those inside its text. */
static void fi_ix_thunks(struct fi_image *im, const uint32_t *desc)
{
	uint64_t base = (uint64_t)(uintptr_t)desc - im->bias;

	for (int r = 0; r < 16; r++) {
		int32_t off = (int32_t)desc[FI_INDEX_W_THUNKS + r];
		uint64_t a = base + (uint64_t)(int64_t)off;

		if (off && fi_image_text(im, a, 1))
			im->thunks[r] = a;
	}
}

/*
 * What the index says of the thunk calls without a check: none
 * (NO_TCALLS), or a list (version 2, TCALL_LIST) that discovery checks
 * entry by entry in the text (elf_sites.c, fi_discover_tcalls) and takes
 * instead of scanning it. A count over the capacity is kept as it is:
 * discovery refuses it and scans.
 */
static void fi_ix_tcall_list(struct fi_image *im, const uint32_t *desc)
{
	uint32_t flags = desc[FI_INDEX_W_FLAGS];

	im->elf->no_tcalls = flags & FI_INDEX_NO_TCALLS;
	if (im->elf->no_tcalls || desc[FI_INDEX_W_VERSION] < FI_INDEX_VERSION ||
	    !(flags & FI_INDEX_TCALL_LIST) || (flags & FI_INDEX_PATCHED))
		return;
	im->elf->tcall_list = (const int32_t *)&desc[FI_INDEX_W_TCALLS];
	im->elf->ntcall_list = desc[FI_INDEX_W_NTCALLS];
	im->elf->tcall_base = (uint64_t)(uintptr_t)desc - im->bias;
	im->elf->has_tcall_list = true;
}

const char *fi_image_tcall_list_bad(const struct fi_image *im)
{
	return im->elf ? im->elf->tcall_list_bad : NULL;
}

/*
 * What an image of a loaded module starts as (fi_image_from_index,
 * fi_image_from_record): its path, reader state and segments; 0 or
 * -errno, @im closed on error.
 */
static int fi_ix_live_image(struct fi_image *im, const char *path,
			    uint64_t bias, const Elf64_Phdr *ph, size_t phnum,
			    char *err, size_t errlen)
{
	im->path = strdup(path);
	im->elf = calloc(1, sizeof(*im->elf));
	if (!im->path || !im->elf) {
		fi_image_close(im);
		fi_ix_fail(err, errlen, "out of memory");
		return -ENOMEM;
	}
	im->live = true;
	im->lazy_syms = true;
	im->phdr = ph;
	im->phnum = phnum;
	im->bias = bias;
	im->e_type = bias ? ET_DYN : ET_EXEC;
	return fi_ix_views(im, ph, phnum, err, errlen);
}

int fi_image_from_index(struct fi_image *im, const char *path, uint64_t bias,
			const Elf64_Phdr *ph, size_t phnum, const uint32_t *desc,
			char *err, size_t errlen)
{
	int ret;

	memset(im, 0, sizeof(*im));
	if ((desc[FI_INDEX_W_VERSION] != FI_INDEX_VERSION &&
	     desc[FI_INDEX_W_VERSION] != FI_INDEX_VERSION_1) ||
	    !(desc[FI_INDEX_W_FLAGS] & FI_INDEX_FILLED)) {
		fi_ix_fail(err, errlen, "module index not filled");
		return -ENOENT;
	}
	ret = fi_ix_live_image(im, path, bias, ph, phnum, err, errlen);
	if (ret == -ENOMEM)
		return ret;
	/* Patched statically: its record, as the file's section would give. */
	if (!ret && (desc[FI_INDEX_W_FLAGS] & FI_INDEX_PATCHED) &&
	    (desc[FI_INDEX_W_VERSION] != FI_INDEX_VERSION ||
	     fi_ix_record(desc, &im->note) == -EINVAL)) {
		fi_ix_fail(err, errlen, "bad .fineibt record in the index");
		ret = -EINVAL;
	}
	if (!ret)
		ret = fi_ix_entries(im, ph, phnum, desc, err, errlen);
	if (!ret)
		ret = fi_ix_traps(im, ph, phnum, desc, err, errlen);
	if (!ret) {
		fi_ix_thunks(im, desc);
		fi_ix_tcall_list(im, desc);
		ret = fi_elf_discover(im);
		if (ret)
			fi_ix_fail(err, errlen, "out of memory");
	}
	if (ret)
		fi_image_close(im);
	return ret;
}

/* The counts of @rec, checked against its length, or false. */
static bool fi_ix_rec_ok(const uint8_t *rec, size_t len, struct fi_cache_rec *h)
{
	if (len < sizeof(*h))
		return false;
	memcpy(h, rec, sizeof(*h));
	if (memcmp(h->magic, FI_CACHE_REC_MAGIC, sizeof(h->magic)) ||
	    h->nfuncs > UINT32_MAX / 8 || h->ncalls > UINT32_MAX / 8)
		return false;
	/* Without registered arrays the record is all of @len; with them,
	 * only its header is read (the arrays stand for its sites), and it
	 * ends before they start. */
	if (!h->regs_off)
		return !h->regs_len && h->nfuncs <= len / 4 &&
		       h->ncalls <= len / 4 &&
		       fi_cache_rec_size(h->nfuncs, h->ncalls) == len;
	return fi_cache_rec_size(h->nfuncs, h->ncalls) <= h->regs_off;
}

/* The executable view holding link-time @a, as [*lo, *hi); false if none. */
static bool fi_ix_exec_view(const struct fi_image *im, uint64_t a,
			    uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		if (v->exec && a >= v->vaddr && a - v->vaddr < v->size) {
			*lo = v->vaddr;
			*hi = v->vaddr + v->size;
			return true;
		}
	}
	return false;
}

/*
 * The record's sites, each inside the executable segment the record
 * counts from, increasing (binary searches and the fingerprint's sample
 * rely on it). Every field written: no zeroing of the arrays (sqlite's
 * 2,600 sites: calloc and a view lookup a site were 118k of 185k
 * instructions). The call sites are checked but kept only when there is
 * no preamble for the fingerprint to sample (with one, every preamble of
 * the record is a kCFI one, which is what says the module is): each kept
 * site is 16 bytes of fresh memory, and a page fault per 256 of them
 * (the 8,000-function program: 32 faults, ~0.4 ms on this project's VM,
 * for a list nothing reads on a hit).
 */
static int fi_ix_rec_sites(struct fi_image *im, const struct fi_cache_rec *h,
			   const uint8_t *p)
{
	const uint8_t *ar = p + 4 * (size_t)h->nfuncs;
	const uint8_t *co = ar + ((h->nfuncs + 3) & ~3u);
	uint64_t lo, hi, prev = 0;
	bool keep = !h->nfuncs;

	if (!fi_ix_exec_view(im, h->base, &lo, &hi))
		return -EINVAL;
	im->funcs = malloc((h->nfuncs + 1) * sizeof(*im->funcs));
	im->calls = malloc(((keep ? h->ncalls : 0) + 1) * sizeof(*im->calls));
	if (!im->funcs || !im->calls)
		return -ENOMEM;
	fi_prefault(im->funcs, h->nfuncs * sizeof(*im->funcs));
	for (uint32_t i = 0; i < h->nfuncs; i++) {
		uint64_t a = h->base + fi_ix_word(p + 4 * (size_t)i);
		int8_t arity = (int8_t)ar[i];

		/* the preamble (func-16 .. func+3) in the segment */
		if (a < lo + FI_PREAMBLE_SIZE || a + 4 > hi || (i && a <= prev) ||
		    arity > FI_MAX_ARITY)
			return -EINVAL;
		im->funcs[i] = (struct fi_func){
			.addr = a, .arity = arity, .form = FI_PRE_KCFI,
			.endbr = true,
		};
		prev = a;
	}
	prev = 0;
	for (uint32_t i = 0; i < h->ncalls; i++) {
		uint64_t a = h->base + fi_ix_word(co + 4 * (size_t)i);

		if (a < lo || a + FI_CALLSITE_SIZE > hi || (i && a <= prev))
			return -EINVAL;
		if (keep)
			im->calls[i] = (struct fi_call){ .addr = a,
							 .form = FI_CALL_KCFI };
		prev = a;
	}
	im->nfuncs = h->nfuncs;
	im->ncalls = keep ? h->ncalls : 0;
	im->nslots = h->nslots;
	for (int a = 0; a <= FI_MAX_ARITY && a < 8; a++)
		im->arity_hist[a] = h->arity_hist[a];
	return 0;
}

int fi_image_from_record(struct fi_image *im, const char *path, uint64_t bias,
			 const Elf64_Phdr *ph, size_t phnum, const uint32_t *desc,
			 const uint8_t *rec, size_t len, char *err, size_t errlen)
{
	struct fi_cache_rec h;
	int ret;

	memset(im, 0, sizeof(*im));
	if (!fi_ix_rec_ok(rec, len, &h))
		return fi_ix_fail(err, errlen, "a site record of another size"),
		       -EINVAL;
	ret = fi_ix_live_image(im, path, bias, ph, phnum, err, errlen);
	if (ret == -ENOMEM)
		return ret;
	if (!ret)
		ret = fi_ix_traps(im, ph, phnum, desc, err, errlen);
	if (!ret && h.regs_off) {
		uint64_t lo, hi;

		/* The entry's arrays stand for the sites: counted only. */
		fi_ix_thunks(im, desc);
		if (!fi_ix_exec_view(im, h.base, &lo, &hi)) {
			fi_ix_fail(err, errlen, "a site record that does not "
				   "fit the module");
			ret = -EINVAL;
		}
		im->rec_sites = (size_t)h.nfuncs + h.ncalls;
		im->nslots = h.nslots;
		for (int a = 0; a <= FI_MAX_ARITY && a < 8; a++)
			im->arity_hist[a] = h.arity_hist[a];
	} else if (!ret) {
		fi_ix_thunks(im, desc);
		ret = fi_ix_rec_sites(im, &h, rec + sizeof(h));
		if (ret)
			fi_ix_fail(err, errlen, ret == -ENOMEM ? "out of memory" :
				   "a site record that does not fit the module");
	}
	if (ret)
		fi_image_close(im);
	return ret;
}

/* ------------------------------------------- modules without an index */

/*
 * The @n lowest entry points among the defined functions of @sym (@nsym
 * of them) into @out (sorted), so that the probe touches the first few
 * pages of the text, not one page per function: in this process those
 * pages may not be mapped yet, and each first touch is a page fault.
 */
static size_t fi_ix_lowest(const Elf64_Sym *sym, size_t nsym, uint64_t bias,
			   uint64_t *out, size_t n)
{
	size_t got = 0;

	for (size_t i = 1; i < nsym; i++) {
		int type = ELF64_ST_TYPE(sym[i].st_info);
		uint64_t func = sym[i].st_value + bias;
		size_t k;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym[i].st_shndx == SHN_UNDEF || !sym[i].st_value)
			continue;
		if (got == n && func >= out[n - 1])
			continue;
		k = got < n ? got++ : n - 1;
		for (; k > 0 && out[k - 1] > func; k--)
			out[k] = out[k - 1];
		out[k] = func;
	}
	return got;
}

/*
 * Up to @n defined functions whose entry lies in [@lo, @hi), in symbol
 * table order, into @out: one pass that stops once it has them (the
 * dynamic symbol table is in hash order, so a large library's first few
 * hundred entries give them), instead of a sort of the whole table.
 */
static size_t fi_ix_near(const Elf64_Sym *sym, size_t nsym, uint64_t bias,
			 uint64_t lo, uint64_t hi, uint64_t *out, size_t n)
{
	size_t got = 0;

	const uint64_t off = bias - lo, span = hi - lo;

	if (!n)
		return 0;
	for (const Elf64_Sym *s = sym + 1, *end = sym + nsym; s < end; s++) {
		int type;

		/* The range first (st_value + bias - lo < span: lo <= entry
		 * < hi): most of a large table lies outside it. */
		if (s->st_value + off >= span)
			continue;
		type = ELF64_ST_TYPE(s->st_info);
		if ((type == STT_FUNC || type == STT_GNU_IFUNC) &&
		    s->st_shndx != SHN_UNDEF && s->st_value) {
			out[got++] = s->st_value + bias;
			if (got == n)
				break;
		}
	}
	return got;
}

/* The first executable segment's run-time range, or false. */
static bool fi_ix_text(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
		       uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*lo = ph[i].p_vaddr + bias;
			*hi = *lo + ph[i].p_memsz;
			return true;
		}
	}
	return false;
}

/* DWARF pointer encodings (DW_EH_PE_*) that .eh_frame_hdr uses. */
#define FI_EH_UDATA4	0x03
#define FI_EH_UDATA8	0x04
#define FI_EH_SDATA4	0x0b
#define FI_EH_SDATA8	0x0c
#define FI_EH_DATAREL	0x30
#define FI_EH_OMIT	0xff

/* Bytes of a value of encoding @enc (format bits only), or 0. */
static size_t fi_ix_eh_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00:	/* absptr */
	case FI_EH_UDATA8:
	case FI_EH_SDATA8:
		return 8;
	case FI_EH_UDATA4:
	case FI_EH_SDATA4:
		return 4;
	}
	return 0;
}

/*
 * Up to @n function entries in [@lo, @hi) (with the preamble before them
 * in it too), lowest first, into @out, from the module's .eh_frame_hdr
 * (PT_GNU_EH_FRAME): its search table holds one (initial location, FDE)
 * pair per function with unwind information, sorted by location and
 * relative to the header (datarel, sdata4: what GNU ld, gold, lld and
 * mold write), so the lowest entries are the first pairs. -1 when the
 * module has no such table (no segment, another encoding, a table larger
 * than its segment): the caller samples symbols.
 */
static long fi_ix_eh_starts(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
			    uint64_t lo, uint64_t hi, uint64_t *out, size_t n)
{
	const uint8_t *h = NULL, *t;
	uint64_t at = 0, size = 0, count, first, span;
	size_t ptrsz, cntsz, got = 0;

	for (size_t i = 0; i < phnum && !h; i++) {
		if (ph[i].p_type == PT_GNU_EH_FRAME && ph[i].p_memsz >= 4) {
			at = ph[i].p_vaddr + bias;
			size = ph[i].p_memsz;
			if (fi_ix_mapped(ph, phnum, bias, at, size))
				h = (const uint8_t *)(uintptr_t)at;
			/* the header and the first 64 pairs: mapped in one
			 * call, not a fault (fi_live_maybe_kcfi) */
			if (h)
				fi_prefault_read(at, at + (size < 528 ? size : 528));
		}
	}
	/* version 1; eh_frame_ptr, fde_count, table encodings */
	if (!h || h[0] != 1 || h[3] != (FI_EH_DATAREL | FI_EH_SDATA4) ||
	    h[2] == FI_EH_OMIT || (h[2] & 0xf0) || h[1] == FI_EH_OMIT)
		return -1;
	ptrsz = fi_ix_eh_size(h[1]);
	cntsz = fi_ix_eh_size(h[2]);
	if (!ptrsz || !cntsz || 4 + ptrsz + cntsz > size)
		return -1;
	if (cntsz == 4)
		count = fi_ix_word(h + 4 + ptrsz);
	else
		memcpy(&count, h + 4 + ptrsz, sizeof(count));
	t = h + 4 + ptrsz + cntsz;
	/* The table lies in the segment (mapped, checked above). */
	if (count > (size - 4 - ptrsz - cntsz) / 8)
		return -1;
	/* Entries in [first, first + span]: the preamble before the
	 * function and its first bytes readable. */
	if (hi - lo < FI_PREAMBLE_SIZE + 4)
		return 0;
	first = lo + FI_PREAMBLE_SIZE;
	span = hi - 4 - first;
	for (uint64_t i = 0; i < count && got < n; i++) {
		uint64_t f = at + (uint64_t)(int64_t)(int32_t)fi_ix_word(t + 8 * i);

		if (f - first <= span)
			out[got++] = f;
		else if (f >= first)
			break;	/* past the segment: sorted */
	}
	return (long)got;
}

bool fi_live_exports_kcfi(const Elf64_Phdr *ph, size_t phnum, uint64_t bias)
{
	uint64_t funcs[FI_PROBE_SYMS], lo, hi;
	const Elf64_Sym *sym;
	size_t n, nsym;

	struct fi_dyntab t;

	if (!fi_ix_text(ph, phnum, bias, &lo, &hi))
		return false;
	fi_ix_dyn(ph, phnum, bias, FI_IX_DYNSYM, &t);
	if (!fi_ix_dynsym(ph, phnum, bias, &t, &sym, &nsym))
		return false;
	/* The first pages of the text: one or two page faults at most. */
	n = fi_ix_near(sym, nsym, bias, lo, lo + FI_PROBE_SPAN, funcs,
		       FI_PROBE_SYMS);
	if (n < FI_PROBE_SYMS)
		n = fi_ix_lowest(sym, nsym, bias, funcs, FI_PROBE_SYMS);
	for (size_t i = 0; i < n; i++) {
		uint64_t pre = funcs[i] - FI_PREAMBLE_SIZE;

		if (fi_ix_in_text(ph, phnum, bias, pre, FI_PREAMBLE_SIZE + 4) &&
		    fi_any_kcfi_preamble(&funcs[i], 1))
			return true;
	}
	return false;
}

bool fi_live_maybe_kcfi(const Elf64_Phdr *ph, size_t phnum, uint64_t bias)
{
	uint64_t funcs[FI_PROBE_FDES], lo, hi;
	long n;

	if (!fi_ix_text(ph, phnum, bias, &lo, &hi))
		return false;
	n = fi_ix_eh_starts(ph, phnum, bias, lo, hi, funcs, FI_PROBE_FDES);
	/*
	 * The pages the samples lie in (the first 64 KiB of the text at
	 * most, sorted), mapped in one call before they are read: libc's are
	 * pages a program seldom runs, and a fault costs several times the
	 * call on a virtual machine (docs/bench.md, "Fixed costs: the faults
	 * a start can take"). Only a mapping: the reads below are the same.
	 */
	if (n > 0 && funcs[n - 1] - funcs[0] < FI_PROBE_SPAN)
		fi_prefault_read(funcs[0] - FI_PREAMBLE_SIZE, funcs[n - 1] + 4);
	if (n > 0 && fi_any_kcfi_preamble(funcs, (size_t)n))
		return true;
	/* A table whose 32 lowest entries lie in the first 64 KiB of the
	 * text describes the start of the text: its answer stands. A
	 * sparser one (objects built without unwind tables, a small
	 * module) leaves the question to the exported functions. */
	if (n == FI_PROBE_FDES && funcs[n - 1] - lo < FI_PROBE_SPAN)
		return false;
	return fi_live_exports_kcfi(ph, phnum, bias);
}
