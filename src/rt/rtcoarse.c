/* SPDX-License-Identifier: MIT */
/*
 * The known-entry table of the coarse check (coarse.h): one bitmap per
 * registered module and JIT region, built when it is frozen into the
 * arena (rtarena.c), and the table of ranges coarse.S scans, rebuilt
 * whole and published by one release store whenever a module, a JIT
 * region or the veneer region comes or goes (rtstate.c,
 * fi_rt_coarse_publish).
 *
 * Why a bitmap and not the sorted entry offsets every registered module
 * already keeps (func_off): one bit per 16 bytes of text is 1/128 of the
 * text (8 KiB per MiB), and the lookup is one bit test where a binary
 * search over a module's thousands of entries is a dozen dependent,
 * unpredictable branches on every call (docs/bench.md, "The coarse
 * check").
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "coarse.h"
#include "dyntab.h"
#include "insn.h"

#define LOAD_ACQ(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)

_Static_assert(FI_COARSE_VEN_MASK + 1 == FI_FVEN_SLOT, "veneer slots");
_Static_assert(FI_COARSE_VEN_ENTRY == FI_FVEN_ENTRY, "veneer entry");
_Static_assert(1u << FI_COARSE_SHIFT == FI_PREAMBLE_SIZE, "entries 16-aligned");

/* The range of a module's bitmap: its text from a 16-aligned start. */
static uint64_t fi_coarse_lo(uint64_t text_lo)
{
	return text_lo & ~(uint64_t)(FI_PREAMBLE_SIZE - 1);
}

/*
 * Only entries with an ENDBR (or its poison, or the BHI magic): a
 * function without one never has its address taken, so no pointer to
 * it is legal (the compiler gives every escaping one an ENDBR).
 */
static bool fi_coarse_entry_ok(const struct fi_func *f, uint64_t bias,
			       uint64_t lo, uint64_t hi)
{
	uint64_t e = f->addr + bias;

	/* Unaligned or outside: the check could never accept it anyway. */
	return f->endbr && e >= lo && e < hi && !(e & (FI_PREAMBLE_SIZE - 1));
}

/* The 64-bit words of a bitmap over [@lo & ~15, @hi). */
size_t fi_coarse_words(uint64_t lo, uint64_t hi)
{
	lo = fi_coarse_lo(lo);
	if (hi <= lo)
		return 0;
	return (size_t)((((hi - lo + FI_PREAMBLE_SIZE - 1) >> FI_COARSE_SHIFT) +
			 63) / 64);
}

/* @im's entries over [@lo & ~15, @hi): the bitmap's words, 0 if none. */
size_t fi_coarse_range_words(uint64_t lo, uint64_t hi,
			     const struct fi_image *im)
{
	size_t i = 0;

	if (!im)
		return fi_coarse_words(lo, hi);
	lo = fi_coarse_lo(lo);
	/* The size depends on the range alone: one entry is enough. */
	while (i < im->nfuncs &&
	       !fi_coarse_entry_ok(&im->funcs[i], im->bias, lo, hi))
		i++;
	return i == im->nfuncs ? 0 : fi_coarse_words(lo, hi);
}

/*
 * The bits of @im's entries over [@lo & ~15, @hi). @pre: in the FineIBT
 * modes a function's checked landing pad is its preamble, which checks
 * r10 against its hash itself: where checked calls still go through the
 * thunks (fineibt patch --no-dethunk) they target it, so it is an entry
 * too.
 */
void fi_coarse_range_fill(uint64_t *bits, uint64_t lo, uint64_t hi,
			  const struct fi_image *im, bool pre)
{
	uint64_t i;

	lo = fi_coarse_lo(lo);
	if (!im) {
		/* Every 16-aligned ENDBR of the live text (read-execute, the
		 * file's own bytes: a module left as compiled). */
		for (uint64_t a = lo; a + 4 <= hi; a += FI_PREAMBLE_SIZE) {
			if (!fi_is_endbr((const void *)(uintptr_t)a))
				continue;
			i = (a - lo) >> FI_COARSE_SHIFT;
			bits[i / 64] |= 1ull << (i % 64);
		}
		return;
	}
	for (size_t k = 0; k < im->nfuncs; k++) {
		if (!fi_coarse_entry_ok(&im->funcs[k], im->bias, lo, hi))
			continue;
		i = (im->funcs[k].addr + im->bias - lo) >> FI_COARSE_SHIFT;
		bits[i / 64] |= 1ull << (i % 64);
		if (pre && i)
			bits[(i - 1) / 64] |= 1ull << ((i - 1) % 64);
	}
}

size_t fi_coarse_module_words(const struct fi_module *m,
			      const struct fi_image *im)
{
	return fi_coarse_range_words(m->text_lo, m->text_hi, im);
}

void fi_coarse_module_fill(uint64_t *bits, const struct fi_module *m,
			   const struct fi_image *im)
{
	fi_coarse_range_fill(bits, m->text_lo, m->text_hi, im,
			     m->cfg.mode == FINEIBT_MODE_FINEIBT);
}

bool fi_coarse_seen_range(const struct fi_rt_seen *e, uint64_t *lo,
			  uint64_t *hi)
{
	if (e->lo < e->hi) {
		*lo = e->lo;
		*hi = e->hi;
	} else if (e->ctraps && e->size) {
		*lo = e->key;
		*hi = e->key + e->size;
	} else {
		return false;
	}
	return true;
}

/* Does the process enforce the coarse check (a table to publish)? */
static bool fi_coarse_enforcing(const struct fi_runtime *rt)
{
	return rt->sealed && rt->active && !rt->primary &&
	       rt->cfg.mode != FINEIBT_MODE_OFF;
}

/*
 * Is seen entry @e a kCFI module no registered module covers (left as
 * compiled: its first executable segment, where its checks are; or its
 * kCFI text when its registration failed)? Its range, in @r, with the
 * bitmap the scan made of its entries (fi_coarse_keep). Without one (no
 * entry known, or not made yet: the module is still being registered)
 * it has no range: no address in it is a known entry, and a coarse call
 * into it traps (docs/protection.md, "The coarse check of a module that
 * is not registered").
 */
static bool fi_coarse_unregistered(const struct fi_runtime *rt,
				   const struct fi_rt_seen *e,
				   struct fi_coarse_range *r)
{
	size_t nslots = LOAD_ACQ(&rt->nmods);
	uint64_t key = LOAD_ACQ(&e->key), lo, hi;

	if (!key || !e->cbits || !fi_coarse_seen_range(e, &lo, &hi))
		return false;
	*r = (struct fi_coarse_range){ fi_coarse_lo(lo), hi, e->cbits };
	for (size_t i = 0; i < nslots && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = rt->mods[i];

		if (m && r->lo < m->text_hi && m->text_lo < r->hi)
			return false;
	}
	return true;
}

static size_t fi_coarse_count(const struct fi_runtime *rt)
{
	size_t nslots = LOAD_ACQ(&rt->nmods), nseen = LOAD_ACQ(&rt->nseen), n = 0;

	for (size_t i = 0; i < nslots && i < FI_MAX_SLOTS; i++)
		n += rt->mods[i] && rt->mods[i]->coarse_bits;
	struct fi_coarse_range r;

	for (size_t i = 0; i < nseen && i < FI_MAX_SEEN; i++)
		n += fi_coarse_unregistered(rt, &rt->seen[i], &r);
	return n + (LOAD_ACQ(&rt->foreign.fven_base) != 0);
}

size_t fi_coarse_table_len(const struct fi_runtime *rt)
{
	if (!fi_coarse_enforcing(rt))
		return 0;
	/* and the sentinel */
	return sizeof(struct fi_coarse) +
	       (fi_coarse_count(rt) + 1) * sizeof(struct fi_coarse_range);
}

/* Sort by lo (a few ranges, rebuilt rarely: insertion). */
static void fi_coarse_sort(struct fi_coarse_range *r, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct fi_coarse_range v = r[i];
		size_t k = i;

		for (; k && r[k - 1].lo > v.lo; k--)
			r[k] = r[k - 1];
		r[k] = v;
	}
}

void fi_coarse_table_fill(const struct fi_runtime *rt, struct fi_coarse *t)
{
	uint64_t ven = LOAD_ACQ(&rt->foreign.fven_base);
	size_t nslots = LOAD_ACQ(&rt->nmods), n = 0;

	for (size_t i = 0; i < nslots && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = rt->mods[i];

		if (m && m->coarse_bits)
			t->r[n++] = (struct fi_coarse_range){
				.lo = fi_coarse_lo(m->text_lo), .hi = m->text_hi,
				.bits = m->coarse_bits,
			};
	}
	for (size_t i = 0; i < LOAD_ACQ(&rt->nseen) && i < FI_MAX_SEEN; i++) {
		if (fi_coarse_unregistered(rt, &rt->seen[i], &t->r[n]))
			n++;
	}
	if (ven)
		t->r[n++] = (struct fi_coarse_range){
			.lo = ven, .hi = ven + FI_FVEN_REGION, .bits = NULL,
		};
	fi_coarse_sort(t->r, n);
	t->r[n] = (struct fi_coarse_range){ .lo = UINT64_MAX, .hi = UINT64_MAX };
	t->n = n;
	t->pad = 0;
}

bool fi_coarse_known(const struct fi_coarse *t, uint64_t addr)
{
	const struct fi_coarse_range *r;
	uint64_t i;

	if (!t)
		return true;
	for (r = t->r; addr >= r->lo; r++) {
		if (addr >= r->hi)
			continue;
		if (!r->bits)
			return ((addr - r->lo) & FI_COARSE_VEN_MASK) ==
			       FI_COARSE_VEN_ENTRY;
		if (addr & (FI_PREAMBLE_SIZE - 1))
			return false;
		i = (addr - r->lo) >> FI_COARSE_SHIFT;
		return r->bits[i / 64] >> (i % 64) & 1;
	}
	return false;
}

/* The control-flow primitives (coarse.h). */
bool fi_flow_primitive(const char *name)
{
	static const char *const deny[] = {
		"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
		"setcontext", "swapcontext",
	};

	for (size_t i = 0; i < sizeof(deny) / sizeof(deny[0]); i++) {
		if (!strcmp(name, deny[i]))
			return true;
	}
	return false;
}

/*
 * The runtime's own text copies (runtime.h, fi_rt_copy_note). A copy the
 * PLT pass moved over a module's text after start-up is anonymous memory
 * to the kernel, so the kernel can no longer say which file bytes an
 * address there holds (fi_export_real: an export of a plug-in whose code
 * shares a page with its PLT). The runtime asked the kernel before the
 * move and keeps the answer in the read-only state, where only a window
 * writes (rtstate.c, fi_rt_copy_note, the one writer). A record is
 * believed only for a mapping that lies inside it: a copy ends where it
 * was moved, and what the kernel maps there anonymously after an unload
 * (a larger mapping, or one at another address) is not it.
 */
bool fi_rt_copy_as_file(uint64_t addr, struct fi_vma *v)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = LOAD_ACQ(&rt->ncopies);

	if (v->file)
		return false;
	for (size_t i = 0; i < n && i < FI_MAX_COPIES; i++) {
		const struct fi_rt_copy *c = &rt->copies[i];

		if (addr < c->lo || addr >= c->hi || v->lo < c->lo ||
		    v->hi > c->hi || !c->ino)
			continue;
		v->file = true;
		v->dev = c->dev;
		v->ino = c->ino;
		v->off = c->off + (v->lo - c->lo);
		return true;
	}
	return false;
}

/* The kernel's view of @addr: from the kept descriptor only when @kept. */
static int fi_export_vma(uint64_t addr, struct fi_vma *v, bool kept)
{
	return kept ? fi_rt_vma_kept(addr, v) : fi_rt_vma(addr, v);
}

/* The program headers of the ELF header @eh, inside its @len read-only bytes. */
static const ElfW(Phdr) *fi_export_phdr(const ElfW(Ehdr) *eh, uint64_t len)
{
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff > len ||
	    (len - eh->e_phoff) / sizeof(ElfW(Phdr)) < eh->e_phnum)
		return NULL;
	return (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
}

/*
 * The offset from the object's start in its file (or, the vDSO, in its
 * one mapping) that address @v of its program headers maps to; @len: the
 * read-only bytes at @eh.
 */
static bool fi_export_file_off(const ElfW(Ehdr) *eh, uint64_t len, uint64_t v,
			       uint64_t *off)
{
	const ElfW(Phdr) *ph = fi_export_phdr(eh, len);

	for (int i = 0; ph && i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && v >= ph[i].p_vaddr &&
		    v - ph[i].p_vaddr < ph[i].p_filesz) {
			*off = v - ph[i].p_vaddr + ph[i].p_offset;
			return true;
		}
	}
	return false;
}

/*
 * The end of the readable, never writable mapping of the object of
 * mapping @o (its file's, or @o) that holds @p, or 0. @h: a read-only
 * mapping of that object already asked (the first page's: its dynamic
 * symbols and names are usually there), which needs no second question.
 */
static uint64_t fi_export_ro_end(const void *p, const struct fi_vma *o,
				 const struct fi_vma *h, bool kept)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	struct fi_vma v;

	if (a >= h->lo && a < h->hi)
		return h->hi;
	if (fi_export_vma(a, &v, kept) || !v.r || v.w || v.file != o->file)
		return 0;
	if (o->file ? v.dev != o->dev || v.ino != o->ino : v.lo != o->lo)
		return 0;
	return v.hi;
}

/* [@p, @p + @n) read-only in the object of mapping @o. */
static bool fi_export_in_obj(const void *p, uint64_t n, const struct fi_vma *o,
			     const struct fi_vma *h, bool kept)
{
	uint64_t end = fi_export_ro_end(p, o, h, kept);

	return end && n <= end - (uint64_t)(uintptr_t)p;
}

/*
 * The object's own dynamic symbol table, its names and its hash table
 * (GNU's, or else the SysV one's count of symbols).
 */
struct fi_export_dyn {
	const ElfW(Sym) *sym;
	const char *str;
	uint64_t strsz;
	const uint32_t *gnu;
	uint64_t nsym;
	uint64_t bias;		/* run-time address - link-time address */
};

/*
 * A pointer of the object's dynamic section: the loader relocates most
 * in place (the load address added), not in a read-only one (the vDSO).
 */
static const void *fi_export_dyn_ptr(uint64_t v, uint64_t bias, uint64_t span)
{
	return (const void *)(uintptr_t)(v - bias < span ? v : v + bias);
}

/*
 * The object's dynamic symbols, names and hash table as its own
 * PT_DYNAMIC says, read through the first page @eh (@len read-only bytes
 * at @base) and the object's read-only memory only: never the link_map's
 * l_info, pointers in writable heap that a forger aims at tables of its
 * own.
 */
static bool fi_export_tables(const ElfW(Ehdr) *eh, uint64_t len, uint64_t base,
			     const struct fi_vma *o, const struct fi_vma *h,
			     bool kept, struct fi_export_dyn *d)
{
	const ElfW(Phdr) *ph = fi_export_phdr(eh, len);
	const ElfW(Phdr) *load = NULL, *dyn = NULL;
	uint64_t sym = 0, str = 0, strsz = 0, gnu = 0, sysv = 0;
	uint64_t bias, span = 0, syment = sizeof(*d->sym), n;
	const uint32_t *h32;
	const ElfW(Dyn) *e;

	for (int i = 0; ph && i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && (!load || ph[i].p_vaddr < load->p_vaddr))
			load = &ph[i];
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > span)
			span = ph[i].p_vaddr + ph[i].p_memsz;
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
	}
	if (!load || !dyn || load->p_offset > load->p_vaddr)
		return false;
	bias = base - (load->p_vaddr - load->p_offset);
	e = (const ElfW(Dyn) *)(uintptr_t)(bias + dyn->p_vaddr);
	n = dyn->p_filesz / sizeof(*e);
	if (!fi_export_in_obj(e, n * sizeof(*e), o, h, kept))
		return false;
	for (; n && e->d_tag != DT_NULL; n--, e++) {
		if (e->d_tag == DT_SYMTAB)
			sym = e->d_un.d_ptr;
		else if (e->d_tag == DT_STRTAB)
			str = e->d_un.d_ptr;
		else if (e->d_tag == DT_STRSZ)
			strsz = e->d_un.d_val;
		else if (e->d_tag == DT_SYMENT)
			syment = e->d_un.d_val;
		else if (e->d_tag == DT_GNU_HASH)
			gnu = e->d_un.d_ptr;
		else if (e->d_tag == DT_HASH)
			sysv = e->d_un.d_ptr;
	}
	*d = (struct fi_export_dyn){
		.sym = sym ? fi_export_dyn_ptr(sym, bias, span) : NULL,
		.str = str ? fi_export_dyn_ptr(str, bias, span) : NULL,
		.strsz = strsz,
		.gnu = gnu ? fi_export_dyn_ptr(gnu, bias, span) : NULL,
		.bias = bias,
	};
	h32 = sysv ? fi_export_dyn_ptr(sysv, bias, span) : NULL;
	if (!d->gnu && h32 && fi_export_in_obj(h32, 8, o, h, kept))
		d->nsym = h32[1];
	return d->sym && d->str && syment == sizeof(*d->sym) &&
	       (d->gnu || d->nsym) && fi_export_in_obj(d->str, d->strsz, o, h, kept);
}

/*
 * The chain of GNU hash table @g that @hash selects: its first symbol
 * (0: none) and the chain's words from symbol @*base on, @*room of them
 * read-only in the object.
 */
static uint64_t fi_export_gnu_chain(const uint32_t *g, const struct fi_vma *o,
				    const struct fi_vma *h, bool kept, uint32_t hash,
				    const uint32_t **chain, uint64_t *base,
				    uint64_t *room)
{
	uint64_t end = fi_export_ro_end(g, o, h, kept), n, k;
	const uint32_t *bucket;

	n = end ? end - (uint64_t)(uintptr_t)g : 0;
	if (n < 16 || !g[0] || (n - 16) / 8 < g[2] ||
	    (n - 16 - 8 * (uint64_t)g[2]) / 4 < g[0])
		return 0;
	bucket = g + 4 + 2 * (uint64_t)g[2];
	*chain = bucket + g[0];
	*base = g[1];
	*room = (end - (uint64_t)(uintptr_t)*chain) / 4;
	k = bucket[hash % g[0]];
	return k >= g[1] ? k : 0;
}

/*
 * Is symbol @i, named @name, in the chain of GNU hash table @g that its
 * name's hash selects, with that hash? Exactly the symbols the loader's
 * lookups and dladdr see.
 */
static bool fi_export_gnu_has(const uint32_t *g, const struct fi_vma *o,
			      const struct fi_vma *h, bool kept, uint64_t i,
			      const char *name)
{
	uint32_t hash = fi_gnu_hash(name);
	const uint32_t *chain;
	uint64_t base, room;
	uint64_t k = fi_export_gnu_chain(g, o, h, kept, hash, &chain, &base, &room);

	if (!k || k > i || i - base >= room)
		return false;
	for (; k < i; k++) {
		if (chain[k - base] & 1)
			return false;
	}
	return (chain[i - base] | 1) == (hash | 1);
}

/*
 * @sym one of the object's dynamic symbols (@d) and @name its own name:
 * not bytes of another table read as a symbol (a relocation read 8 bytes
 * in is a "symbol" whose value is its addend), nor the real symbol under
 * another name (longjmp's read as "abs").
 */
static bool fi_export_is_sym(const struct fi_export_dyn *d, const ElfW(Sym) *sym,
			     const char *name, const struct fi_vma *o,
			     const struct fi_vma *h, bool kept)
{
	uint64_t at = (uint64_t)((uintptr_t)sym - (uintptr_t)d->sym), i;

	if ((uintptr_t)sym < (uintptr_t)d->sym || at % sizeof(*sym) ||
	    !fi_export_in_obj(sym, sizeof(*sym), o, h, kept) ||
	    sym->st_name >= d->strsz || name != d->str + sym->st_name ||
	    !memchr(name, 0, d->strsz - sym->st_name))
		return false;
	i = at / sizeof(*sym);
	return d->gnu ? fi_export_gnu_has(d->gnu, o, h, kept, i, name) : i < d->nsym;
}

/*
 * The kernel's view of @target and of the object's first page at @base:
 * @t the target's mapping, executable and never writable (the vDSO: its
 * one mapping, at file offset 0), @h the first page's, read-only at
 * offset 0 of the same file. 1 when they agree, 0 when not, -ENODEV when
 * the kernel cannot be asked.
 */
static int fi_export_maps(uint64_t target, uint64_t base, struct fi_vma *t,
			  struct fi_vma *h, bool kept)
{
	int err = fi_export_vma(target, t, kept);

	if (err == -ENODEV)
		return err;
	if (err || !t->x || t->w)
		return 0;
	/* A copy the runtime moved over the object's text (the PLT pass):
	 * judged as the file's pages it was made from (rtstate.c). */
	if (!t->file && !fi_rt_copy_as_file(target, t)) {
		if (t->lo != base)
			return 0;
		*h = *t;
		t->off = 0;
		return 1;
	}
	return !fi_export_vma(base, h, kept) && h->file && h->r && !h->w &&
	       !h->off && h->lo == base && h->dev == t->dev && h->ino == t->ino;
}

/* Does link-time address @v of the object at @eh map to @a in mapping @m? */
static bool fi_export_at(const ElfW(Ehdr) *eh, const struct fi_vma *h,
			 uint64_t v, const struct fi_vma *m, uint64_t a)
{
	uint64_t off;

	return fi_export_file_off(eh, h->hi - h->lo, v, &off) &&
	       off == m->off + (a - m->lo);
}

/*
 * dladdr's answer rests on the object's link_map (its l_addr, l_info:
 * writable heap): a forged one names any address of the object's text
 * as an export, under any name. The kernel checks it: @target executable
 * and never writable, in the file whose first page (read-only, offset 0)
 * is at @fbase (the vDSO: in the one mapping that starts there), at the
 * offset the symbol's value maps to through that page's program
 * headers (a copy of those pages the runtime itself moved there: the
 * file and offset it recorded as it made it); the symbol one of the
 * object's own dynamic symbols and @name its own name, by the object's
 * PT_DYNAMIC in read-only memory. When the kernel cannot be asked
 * (@kept: the SIGILL handler, which only uses the runtime's kept maps
 * descriptor, has none; else no /proc), as before.
 */
bool fi_export_real(uint64_t target, const void *fbase, const ElfW(Sym) *sym,
		    const char *name, bool kept)
{
	uint64_t base = (uint64_t)(uintptr_t)fbase;
	struct fi_export_dyn d;
	struct fi_vma t, h;
	int ok = fi_export_maps(target, base, &t, &h, kept);

	if (ok == -ENODEV)
		return true;
	return ok && fi_export_tables(fbase, h.hi - h.lo, base, &t, &h, kept, &d) &&
	       fi_export_is_sym(&d, sym, name, &t, &h, kept) &&
	       fi_export_at(fbase, &h, sym->st_value, &t, target);
}

/*
 * Does IFUNC symbol @s (the object's own: @d) resolve to @target? Its
 * resolver is where the kernel maps @s's value, executable and never
 * writable in the object's file; called as the loader calls it (no
 * argument on x86-64), which libc's dlsym does at every lookup too.
 */
static bool fi_export_resolves(const struct fi_export_dyn *d, const ElfW(Sym) *s,
			       const ElfW(Ehdr) *eh, const struct fi_vma *t,
			       const struct fi_vma *h, uint64_t target)
{
	uint64_t res = d->bias + s->st_value;
	struct fi_vma r = *t;

	if (ELF64_ST_TYPE(s->st_info) != STT_GNU_IFUNC || s->st_shndx == SHN_UNDEF)
		return false;
	if (res < t->lo || res >= t->hi) {
		if (fi_export_vma(res, &r, false) || !r.x || r.w || r.file != t->file ||
		    (t->file ? r.dev != t->dev || r.ino != t->ino : r.lo != t->lo))
			return false;
		if (!t->file)
			r.off = 0;
	}
	return fi_export_at(eh, h, s->st_value, &r, res) &&
	       ((uint64_t (*)(void))(uintptr_t)res)() == target;
}

int fi_export_ifunc(uint64_t target, const void *fbase, const char *name)
{
	uint64_t base = (uint64_t)(uintptr_t)fbase, k, at, room, len;
	uint32_t hash = fi_gnu_hash(name);
	const uint32_t *chain;
	struct fi_export_dyn d;
	const ElfW(Sym) *s;
	struct fi_vma t, h;
	int ok = fi_export_maps(target, base, &t, &h, false);

	if (ok <= 0)
		return ok;
	if (!fi_export_tables(fbase, h.hi - h.lo, base, &t, &h, false, &d) || !d.gnu)
		return 0;
	k = fi_export_gnu_chain(d.gnu, &t, &h, false, hash, &chain, &at, &room);
	len = strlen(name) + 1;
	for (; k && k - at < room; k++) {
		s = &d.sym[k];
		if ((chain[k - at] | 1) == (hash | 1) &&
		    fi_export_in_obj(s, sizeof(*s), &t, &h, false) &&
		    s->st_name < d.strsz && len <= d.strsz - s->st_name &&
		    !memcmp(d.str + s->st_name, name, len) &&
		    fi_export_resolves(&d, s, fbase, &t, &h, target))
			return 1;
		if (chain[k - at] & 1)
			break;
	}
	return 0;
}
