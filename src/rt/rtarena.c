/* SPDX-License-Identifier: MIT */
/*
 * The arena of the runtime state: the registered modules live here, not
 * in malloc'd memory, so they can be read-only like the rest of the state
 * (rtwrite.c). A registered module is a deep copy of what its registrar
 * built (struct fi_module, its fi_image, the views, the symbols and their
 * names, and a compact record of its sites: 5 bytes per preamble, the
 * trap list unless the module's own .kcfi_traps is read-only and sorted,
 * see fi_image.ktraps): everything the trap handler reads to decide
 * whether an #UD is a CFI failure, how to report it and whether to let
 * the program continue (the module's warn flag). Call sites themselves
 * are never copied: the handler decodes them from the (read-only) text.
 *
 * A bump allocator over chunks whose table sits in the state: the first
 * inside the state's own block, the others mmap'd. Chunks are read-only
 * from the moment they exist (sealed with the state) and written only
 * through fi_rt_put. Nothing is ever freed: a withdrawn module may still
 * be read by a handler running in another thread, as with the malloc'd
 * modules of before.
 *
 * A copy is laid out in a scratch buffer first, with every pointer already
 * the one it will have in the arena, written in one fi_rt_put, then
 * verified where it landed (rtverify.c): the scratch is writable memory,
 * and a thread that changed it between the layout and the write would
 * otherwise have its bytes published.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coarse.h"
#include "rawsys.h"
#include "runtime.h"

/*
 * The first chunk is the state block's own (FI_RT_ARENA0, rtwrite.c) when
 * the first copy fits there; the others are mapped. Mapped chunks grow
 * geometrically (128 KiB, twice each, ..., 16 MiB), so the
 * fixed chunk table holds ~800 MiB: a JIT that registers and withdraws
 * regions for a long time (each withdrawal leaks its ~1 KiB copy, as the
 * malloc'd modules did before) does not run out. Pages are committed only
 * once written.
 */
#define FI_ARENA_MIN	(128u * 1024)
#define FI_ARENA_SHIFT_MAX 7
#define FI_ARENA_ALIGN	16

static size_t fi_arena_round(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

/* A new chunk holding @len bytes already taken, in the table; NULL if none. */
static const struct fi_arena_chunk *fi_arena_grow(const struct fi_arena *a,
						  size_t len)
{
	size_t n = a->nchunks;
	size_t shift = n / 2 < FI_ARENA_SHIFT_MAX ? n / 2 : FI_ARENA_SHIFT_MAX;
	size_t size = (size_t)FI_ARENA_MIN << shift;
	struct fi_arena_chunk c;

	if (n == FI_ARENA_CHUNKS)
		return NULL;
	size = fi_arena_round(len > size ? len : size, 4096);
	c = (struct fi_arena_chunk){ .size = size, .used = len };
	/* The first chunk is the one in the state's block, when what it
	 * takes fits there: no mapping to make (and none to tear down). */
	if (!n && len <= FI_RT_ARENA0)
		c.base = fi_rt_arena_first(&c.size);
	else
		c.base = fi_rt_map_sealed(size);
	if (!c.base)
		return NULL;
	/*
	 * The first chunk and the count side by side in one put: a reader
	 * that sees the count before the chunk sees an empty one, which owns
	 * nothing (and nothing points into it yet).
	 */
	if (!n) {
		struct { size_t n; struct fi_arena_chunk c; } first = { 1, c };

		_Static_assert(offsetof(struct fi_arena, chunk) == sizeof(size_t),
			       "nchunks, then chunk[0]");
		return fi_rt_put(a, &first, sizeof(first)) ? NULL : &a->chunk[0];
	}
	if (fi_rt_put(&a->chunk[n], &c, sizeof(c)) || FI_RT_PUT(a->nchunks, n + 1))
		return NULL;	/* an unused mapping stays: harmless */
	return &a->chunk[n];
}

void *fi_arena_alloc(const struct fi_arena *a, size_t len)
{
	const struct fi_arena_chunk *c = a->nchunks ? &a->chunk[a->nchunks - 1] : NULL;
	void *p;

	len = fi_arena_round(len ? len : 1, FI_ARENA_ALIGN);
	if (!c || c->size - c->used < len) {
		c = fi_arena_grow(a, len);
		return c ? c->base : NULL;
	}
	p = c->base + c->used;
	if (FI_RT_PUT(c->used, c->used + len))
		return NULL;
	return p;
}

bool fi_arena_owns(const struct fi_arena *a, const void *p, size_t len)
{
	uintptr_t x = (uintptr_t)p;
	size_t n = __atomic_load_n(&a->nchunks, __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < n && i < FI_ARENA_CHUNKS; i++) {
		uintptr_t base = (uintptr_t)a->chunk[i].base;

		if (x >= base && x - base <= a->chunk[i].used &&
		    a->chunk[i].used - (x - base) >= len)
			return true;
	}
	return false;
}

/* ----------------------------------------------------------- deep copy */

/*
 * The copy's layout: run once to measure (@buf NULL), once to fill. Each
 * part is placed at the next 16-aligned offset; what is returned is the
 * address it will have in the arena (@at + offset).
 */
struct fi_lay {
	uint8_t *buf;
	uint64_t at;
	size_t len, cap;	/* cap: @buf's size (the source may have
				 * changed since it was measured) */
	bool fail;
};

/* Room for @n elements of @size at the next offset: its arena address;
 * NULL (with l->fail set unless @n is 0) when there is none. */
static void *fi_lay_room(struct fi_lay *l, size_t n, size_t size)
{
	size_t off = l->len;

	if (!n)
		return NULL;
	if (size && n > SIZE_MAX / size / 2) {
		l->fail = true;
		return NULL;
	}
	l->len = fi_arena_round(off + n * size, FI_ARENA_ALIGN);
	if (l->buf && l->len > l->cap) {
		l->fail = true;
		return NULL;
	}
	return (void *)(uintptr_t)(l->at + off);
}

static void *fi_lay_dup(struct fi_lay *l, const void *src, size_t n,
			size_t size)
{
	size_t off = l->len;
	void *at = src ? fi_lay_room(l, n, size) : NULL;

	if (at && l->buf)
		memcpy(l->buf + off, src, n * size);
	return at;
}

/* Where the part at arena address @p is in the scratch buffer. */
static void *fi_lay_here(const struct fi_lay *l, const void *p)
{
	return l->buf + ((uint64_t)(uintptr_t)p - l->at);
}

static const char *fi_lay_str(struct fi_lay *l, const char *s)
{
	return s ? fi_lay_dup(l, s, strlen(s) + 1, 1) : NULL;
}

static void fi_lay_names(struct fi_lay *l, const struct fi_image *src,
			 struct fi_image *im)
{
	struct fi_sym *syms = im->syms && l->buf ? fi_lay_here(l, im->syms) : NULL;
	struct fi_typeid *ids = im->typeids && l->buf ? fi_lay_here(l, im->typeids) : NULL;

	for (size_t i = 0; im->syms && i < im->nsyms; i++) {
		const char *n = fi_lay_str(l, src->syms[i].name);

		if (syms)
			syms[i].name = n;
	}
	for (size_t i = 0; im->typeids && i < im->ntypeids; i++) {
		const char *n = fi_lay_str(l, src->typeids[i].name);

		if (ids)
			ids[i].name = n;
	}
}

/*
 * The image's arrays (but the per-site ones: fi_lay_sites), each into the
 * copy. The file buffer and the reader's private state are not copied: a
 * registered module is live, its views point at the mapped module, and
 * its names are copied here.
 */
static void fi_lay_image(struct fi_lay *l, const struct fi_image *src,
			 struct fi_image *im)
{
	/* Counts from @im, the copy taken once: @src may change meanwhile. */
	im->path = fi_lay_str(l, src->path);
	im->views = fi_lay_dup(l, src->views, im->nviews, sizeof(*src->views));
	im->syms = fi_lay_dup(l, src->syms, im->nsyms, sizeof(*src->syms));
	/* Preambles: fi_lay_sites. Calls: read from the text when needed. */
	im->funcs = NULL;
	im->calls = NULL;
	im->tcalls = NULL;
	im->scalls = NULL;
	im->nfuncs = im->ncalls = im->ntcalls = im->nscalls = 0;
	im->typeids = fi_lay_dup(l, src->typeids, im->ntypeids,
				 sizeof(*src->typeids));
	im->naked = fi_lay_dup(l, src->naked, im->nnaked, sizeof(*src->naked));
	/* Read by nothing after registration. */
	im->bad = NULL;
	im->nbad = 0;
	im->is_stock = false;	/* as the empty sites say (c.stock keeps it) */
	/* In place (im->ktraps): nothing to copy. */
	im->traps = fi_lay_dup(l, src->traps, im->ntraps, sizeof(*src->traps));
	fi_lay_names(l, src, im);
	im->file = NULL;
	im->file_size = 0;
	im->elf = NULL;
}

/*
 * Every rewritten site differs from its compiler form: a sample of them
 * tells as well as all of them, at a fixed cost. The fingerprint reads
 * the sample from the text, and a text page read for the first time is
 * a page fault (on a cache hit, of the entry's page cache; the program
 * may never run that page): the sample is at most FI_FP_RUNS runs of
 * neighbouring sites, each within one page, the pages spread over the
 * module (the first holds its lowest site, the last its highest). 256
 * sites spread evenly touched every page of a large module's text at
 * each start (the 8,000-function program: 11 faults with the kernel's
 * fault-around); runs of 64 neighbours still spanned 14 pages each in
 * gawk, whose functions are large.
 */
#define FI_FP_RUNS	4
#define FI_FP_RUN	(FI_FP_SITES / FI_FP_RUNS)

/* Link-time address of sample candidate @i: calls first, then preambles. */
static uint64_t fi_fp_at(const struct fi_image *im, size_t i)
{
	return i < im->ncalls ? im->calls[i].addr :
	       im->funcs[i - im->ncalls].addr - FI_PREAMBLE_SIZE;
}

size_t fi_fp_sample(const struct fi_image *im, uint64_t *out)
{
	size_t n = im->ncalls + im->nfuncs, k = 0, next = 0;

	for (size_t r = 0; r < FI_FP_RUNS && n; r++) {
		size_t at = r * (n - 1) / (FI_FP_RUNS - 1), lo = at, i;
		uint64_t page = fi_fp_at(im, at) >> 12;

		if (at < next)
			continue;	/* in the run before (a small module) */
		while (lo > next && at - lo < FI_FP_RUN - 1 &&
		       fi_fp_at(im, lo - 1) >> 12 == page)
			lo--;
		for (i = lo; i < n && i - lo < FI_FP_RUN &&
			     fi_fp_at(im, i) >> 12 == page; i++, k++) {
			if (out)
				out[k] = fi_fp_at(im, i) |
					 (i < im->ncalls ? FI_FP_CALL : 0);
		}
		next = i;
	}
	return k;
}

/* One word into the fingerprint: multiply and fold (a bijection of @h for
 * each @w, whose high bits reach the low ones). */
static inline uint64_t fi_fp_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

uint64_t fi_fp_hash(const struct fi_image *im, const uint64_t *sample, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	_Static_assert(FI_CALLSITE_SIZE == 20, "the fingerprint reads 8+8+4 bytes");
	for (size_t i = 0; i < n; i++) {
		uint64_t a = sample[i] & ~FI_FP_CALL, w0, w1;
		const uint8_t *p = fi_image_text(im, a, FI_CALLSITE_SIZE);
		uint32_t w2;

		if (!p)
			continue;
		memcpy(&w0, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 4);
		/* A call site's first 6 bytes change when foreign.c opens it:
		 * of the first word, only bytes 6 and 7 count. */
		if (sample[i] & FI_FP_CALL)
			w0 >>= 48;
		h = fi_fp_mix(fi_fp_mix(fi_fp_mix(h, w0), w1), w2);
	}
	return h;
}

/*
 * What the registered copy keeps of @im's sites: 5 bytes per preamble
 * (offset, arity) and the fingerprint's sample, instead of 16 bytes per
 * preamble and per call site. Entries more than 4 GiB apart (no module
 * is that large) are not kept: no arity, no "as in" for that module.
 */
static void fi_lay_sites(struct fi_lay *l, struct fi_module *c,
			 const struct fi_image *im)
{
	size_t n = im->nfuncs, off, ar;
	bool arity = false;

	/*
	 * The sample counted, then taken straight into its room: no 2 KiB
	 * array on the stack under the scan's own frame (the deepest path
	 * of a start that registers a module, and of a dlopen from a thread
	 * with a small stack: docs/bench.md, "The arena's first chunk in
	 * the state's block").
	 */
	off = l->len;
	c->nfp = fi_fp_sample(im, NULL);
	c->fp_site = fi_lay_room(l, c->nfp, sizeof(uint64_t));
	if (c->fp_site && l->buf)
		fi_fp_sample(im, (uint64_t *)(l->buf + off));
	if (!n || im->funcs[n - 1].addr - im->funcs[0].addr > UINT32_MAX)
		return;
	for (size_t i = 0; i < n; i++)
		arity |= im->funcs[i].arity >= 0;
	/* Room first, filled in place (no stack copy of a large array). */
	off = l->len;
	c->func_off = fi_lay_dup(l, im->funcs, n, sizeof(uint32_t));
	ar = l->len;
	c->func_arity = arity ? fi_lay_dup(l, im->funcs, n, 1) : NULL;
	c->func_base = im->funcs[0].addr;
	c->nfunc = n;
	for (size_t i = 0; l->buf && !l->fail && i < n; i++) {
		uint32_t v = (uint32_t)(im->funcs[i].addr - c->func_base);

		memcpy(l->buf + off + i * sizeof(v), &v, sizeof(v));
		if (arity)
			l->buf[ar + i] = (uint8_t)im->funcs[i].arity;
	}
}

size_t fi_module_nfuncs(const struct fi_module *m)
{
	return m->func_off ? m->nfunc : m->img.nfuncs;
}

uint64_t fi_module_func(const struct fi_module *m, size_t i)
{
	return m->func_off ? m->func_base + m->func_off[i] : m->img.funcs[i].addr;
}

int fi_module_arity(const struct fi_module *m, uint64_t func)
{
	size_t lo = 0, hi = fi_module_nfuncs(m);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = fi_module_func(m, mid);

		if (v == func) {
			if (!m->func_off)
				return m->img.funcs[mid].arity;
			return m->func_arity ? m->func_arity[mid] : -1;
		}
		if (v < func)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * The bitmap of @c's known entries for the coarse check (coarse.h), from
 * @im's functions over @c's text: zeroed room, then its bits.
 */
static void fi_lay_coarse(struct fi_lay *l, struct fi_module *c,
			  const struct fi_image *im)
{
	size_t words = fi_coarse_module_words(c, im), off = l->len;

	c->coarse_bits = NULL;
	if (!words || words > SIZE_MAX / 16)
		return;
	l->len = fi_arena_round(off + words * sizeof(uint64_t), FI_ARENA_ALIGN);
	if (l->buf && l->len > l->cap) {
		l->fail = true;
		return;
	}
	c->coarse_bits = (const uint64_t *)(uintptr_t)(l->at + off);
	if (l->buf)
		fi_coarse_module_fill((uint64_t *)(l->buf + off), c, im);
}

/* The registered arrays of @m into @l, their addresses into @c. */
static void fi_lay_regs(struct fi_lay *l, struct fi_module *c,
			const struct fi_module *m)
{
	c->func_off = NULL;
	c->func_arity = NULL;
	c->fp_site = NULL;
	c->nfunc = c->nfp = 0;
	c->regs = NULL;
	c->regs_len = 0;
	fi_lay_sites(l, c, &m->img);
	fi_lay_coarse(l, c, &m->img);
}

size_t fi_arena_lay_regs(const struct fi_module *m, size_t hdr, uint8_t *buf,
			 size_t cap, struct fi_module *out)
{
	struct fi_lay l = { .buf = buf, .len = fi_arena_round(hdr, FI_ARENA_ALIGN),
			    .cap = cap };

	*out = *m;
	fi_lay_regs(&l, out, m);
	return l.fail ? 0 : l.len;
}

/*
 * Lay @m's copy out in @l (measure, or fill @l->buf). A module mapped
 * from the cache keeps its arrays where they are mapped (@m->regs).
 */
static void fi_lay_module(struct fi_lay *l, const struct fi_module *m,
			  const void *key)
{
	struct fi_module c = *m;

	l->len = fi_arena_round(sizeof(c), FI_ARENA_ALIGN);
	c.key = key;
	c.stock = m->stock || fi_image_stock(&m->img);
	if (!m->regs)
		fi_lay_regs(l, &c, m);
	fi_lay_image(l, &m->img, &c.img);
	if (l->buf)
		memcpy(l->buf, &c, sizeof(c));
}

const struct fi_module *fi_arena_freeze(const struct fi_arena *a,
					const struct fi_module *m, bool jit,
					uint64_t lo, uint64_t hi)
{
	struct fi_lay l = { 0 };
	struct fi_module *c;
	int err;

	fi_lay_module(&l, m, m);
	if (l.fail) {
		errno = ENOMEM;
		return NULL;
	}
	c = fi_arena_alloc(a, l.len);
	l.buf = c ? calloc(1, l.len) : NULL;
	if (!l.buf) {
		errno = ENOMEM;
		return NULL;	/* the room stays in the arena, unused */
	}
	fi_prefault(l.buf, l.len);	/* laid out whole just below */
	l.at = (uint64_t)(uintptr_t)c;
	l.cap = l.len;
	fi_lay_module(&l, m, m);
	err = l.fail ? -EBADMSG : fi_rt_put_module(c, l.buf, l.cap);
	/* It held the key: the arena copy is its home, nowhere else. */
	fi_rt_wipe(l.buf, l.cap);
	free(l.buf);
	/* What landed, not what was meant: the scratch was writable. */
	if (!err)
		err = fi_rt_verify_module(c, l.cap, m, jit, lo, hi);
	if (err) {
		errno = -err;
		return NULL;	/* nothing points at it: never a module */
	}
	return c;
}
