/* SPDX-License-Identifier: MIT */
/*
 * The arena of the runtime state: the registered modules live here, not
 * in malloc'd memory, so they can be read-only like the rest of the state
 * (rtstate.c). A registered module is a deep copy of what its registrar
 * built (struct fi_module, its fi_image, the views, the symbols and their
 * names, and a compact record of its sites: 5 bytes per preamble, the
 * trap list unless the module's own .kcfi_traps is read-only and sorted,
 * see fi_image.ktraps): everything the trap handler reads to decide
 * whether an #UD is a CFI failure, how to report it and whether to let
 * the program continue (the module's warn flag). Call sites themselves
 * are never copied: the handler decodes them from the (read-only) text.
 *
 * A bump allocator over mmap'd chunks whose table sits in the protected
 * storage. Nothing is ever freed: a withdrawn module may still be read by
 * a handler running in another thread, as with the malloc'd modules of
 * before. Allocation only happens inside a write window; the chunks it
 * wrote are made read-only when the window closes (fi_arena_close).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "coarse.h"
#include "runtime.h"

/*
 * Chunks grow geometrically (128 KiB, twice each, ..., 16 MiB), so the
 * fixed chunk table holds ~800 MiB: a JIT that registers and withdraws
 * regions for a long time (each withdrawal leaks its ~1 KiB copy, as the
 * malloc'd modules did before) does not run out. Pages are committed only
 * once written.
 */
#define FI_ARENA_MIN	(128u * 1024)
#define FI_ARENA_SHIFT_MAX 7
#define FI_ARENA_ALIGN	16
#define FI_ARENA_GUARD	4096

static size_t fi_arena_round(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

/*
 * Open the chunk from the page holding its first free byte: the pages
 * before it are done (nothing is freed or rewritten), and changing the
 * protection of a present page is what a window costs (rtstate.c). That
 * splits the chunk's mapping; with no mapping slot left, the whole chunk
 * is opened instead (a whole mapping: no slot needed, as before).
 */
static int fi_arena_open_chunk(struct fi_arena_chunk *c)
{
	size_t pg = c->used / 4096;

	if (c->open)
		return 0;
	if (pg >= c->size / 4096 ||
	    mprotect(c->base + pg * 4096, c->size - pg * 4096,
		     PROT_READ | PROT_WRITE)) {
		if (mprotect(c->base, c->size, PROT_READ | PROT_WRITE))
			return -errno;
		pg = 0;
	}
	c->open_pg = (uint32_t)pg;
	c->open = true;
	return 0;
}

static struct fi_arena_chunk *fi_arena_grow(struct fi_arena *a, size_t len)
{
	size_t shift = a->nchunks / 2 < FI_ARENA_SHIFT_MAX ? a->nchunks / 2 :
		       FI_ARENA_SHIFT_MAX;
	size_t size = (size_t)FI_ARENA_MIN << shift;
	struct fi_arena_chunk *c;
	void *p;

	size = fi_arena_round(len > size ? len : size, 4096);

	if (a->nchunks == FI_ARENA_CHUNKS)
		return NULL;
	/*
	 * Between two PROT_NONE guard pages, the chunk is a mapping of its
	 * own that merges with nothing: making it read-only again changes a
	 * whole mapping and needs no mapping slot, so fi_arena_close cannot
	 * fail at vm.max_map_count (rtstate.c).
	 */
	p = mmap(NULL, size + 2 * FI_ARENA_GUARD, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect((uint8_t *)p + FI_ARENA_GUARD, size, PROT_READ | PROT_WRITE)) {
		munmap(p, size + 2 * FI_ARENA_GUARD);
		return NULL;
	}
	p = (uint8_t *)p + FI_ARENA_GUARD;
	c = &a->chunk[a->nchunks++];
	*c = (struct fi_arena_chunk){ .base = p, .size = size, .open = true };
	/* open_pg 0: the whole new chunk is read-write. */
	return c;
}

void *fi_arena_alloc(struct fi_arena *a, size_t len)
{
	struct fi_arena_chunk *c = a->nchunks ? &a->chunk[a->nchunks - 1] : NULL;
	void *p;

	len = fi_arena_round(len ? len : 1, FI_ARENA_ALIGN);
	if (!c || c->size - c->used < len)
		c = fi_arena_grow(a, len);
	if (!c || fi_arena_open_chunk(c))
		return NULL;
	p = c->base + c->used;
	c->used += len;
	return p;
}

int fi_arena_close(struct fi_arena *a)
{
	int ret = 0;

	for (size_t i = 0; i < a->nchunks; i++) {
		struct fi_arena_chunk *c = &a->chunk[i];

		if (!c->open)
			continue;
		/*
		 * The whole chunk, whatever open_pg says, in one call: the
		 * kernel changes (and walks the page tables of) only the
		 * read-write part, and leaves the pages before open_pg,
		 * already read-only, alone. Closing the part first cost one
		 * more system call, and with open_pg 0 repeated the same one.
		 */
		if (mprotect(c->base, c->size, PROT_READ))
			ret = -errno;
		else
			c->open = false;
	}
	return ret;
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

/* Copy @n elements of @size bytes; NULL in, NULL out (and n == 0 too). */
static void *fi_arena_dup(struct fi_arena *a, const void *src, size_t n,
			  size_t size, bool *fail)
{
	void *p;

	if (!src || !n)
		return NULL;
	if (size && n > SIZE_MAX / size) {
		*fail = true;
		return NULL;
	}
	p = fi_arena_alloc(a, n * size);
	if (!p) {
		*fail = true;
		return NULL;
	}
	memcpy(p, src, n * size);
	return p;
}

static const char *fi_arena_str(struct fi_arena *a, const char *s, bool *fail)
{
	return s ? fi_arena_dup(a, s, strlen(s) + 1, 1, fail) : NULL;
}

static void fi_arena_names(struct fi_arena *a, struct fi_image *im, bool *fail)
{
	struct fi_sym *syms = (struct fi_sym *)im->syms;
	struct fi_typeid *ids = im->typeids;

	for (size_t i = 0; syms && i < im->nsyms && !*fail; i++)
		syms[i].name = fi_arena_str(a, syms[i].name, fail);
	for (size_t i = 0; ids && i < im->ntypeids && !*fail; i++)
		ids[i].name = fi_arena_str(a, ids[i].name, fail);
}

/*
 * The image's arrays (but the per-site ones: fi_arena_sites), each into
 * the arena. The file buffer and the
 * reader's private state are not copied: a registered module is live,
 * its views point at the mapped module, and its names are copied here.
 */
static void fi_arena_image(struct fi_arena *a, struct fi_image *im, bool *f)
{
	im->path = fi_arena_str(a, im->path, f);
	im->views = fi_arena_dup(a, im->views, im->nviews, sizeof(*im->views), f);
	im->syms = fi_arena_dup(a, im->syms, im->nsyms, sizeof(*im->syms), f);
	/* Preambles: fi_arena_sites. Calls: read from the text when needed. */
	im->funcs = NULL;
	im->calls = NULL;
	im->tcalls = NULL;
	im->scalls = NULL;
	im->nfuncs = im->ncalls = im->ntcalls = im->nscalls = 0;
	im->typeids = fi_arena_dup(a, im->typeids, im->ntypeids,
				   sizeof(*im->typeids), f);
	im->naked = fi_arena_dup(a, im->naked, im->nnaked, sizeof(*im->naked), f);
	im->bad = fi_arena_dup(a, im->bad, im->nbad, sizeof(*im->bad), f);
	/* In place (im->ktraps): nothing to copy. */
	im->traps = fi_arena_dup(a, im->traps, im->ntraps, sizeof(*im->traps), f);
	fi_arena_names(a, im, f);
	im->file = NULL;
	im->file_size = 0;
	im->elf = NULL;
}

size_t fi_fp_sample(const struct fi_image *im, uint64_t *out)
{
	size_t n = im->ncalls + im->nfuncs, k = 0;
	/* Every rewritten site differs from its compiler form: a spread-out
	 * sample of them tells as well as all of them, at a fixed cost. */
	size_t step = n > FI_FP_SITES ? n / FI_FP_SITES : 1;

	for (size_t i = 0; i < n && k < FI_FP_SITES; i += step)
		out[k++] = i < im->ncalls ? im->calls[i].addr | FI_FP_CALL :
			   im->funcs[i - im->ncalls].addr - FI_PREAMBLE_SIZE;
	return k;
}

/*
 * What the registered copy keeps of @im's sites: 5 bytes per preamble
 * (offset, arity) and the fingerprint's sample, instead of 16 bytes per
 * preamble and per call site. Entries more than 4 GiB apart (no module
 * is that large) are not kept: no arity, no "as in" for that module.
 */
static void fi_arena_sites(struct fi_arena *a, struct fi_module *c,
			   const struct fi_image *im, bool *f)
{
	uint64_t fp[FI_FP_SITES];
	bool arity = false;
	uint32_t *off;
	int8_t *ar;

	c->nfp = fi_fp_sample(im, fp);
	c->fp_site = fi_arena_dup(a, fp, c->nfp, sizeof(fp[0]), f);
	if (!im->nfuncs ||
	    im->funcs[im->nfuncs - 1].addr - im->funcs[0].addr > UINT32_MAX)
		return;
	off = fi_arena_alloc(a, im->nfuncs * sizeof(*off));
	if (!off) {
		*f = true;
		return;
	}
	c->func_base = im->funcs[0].addr;
	for (size_t i = 0; i < im->nfuncs; i++) {
		off[i] = (uint32_t)(im->funcs[i].addr - c->func_base);
		arity |= im->funcs[i].arity >= 0;
	}
	c->func_off = off;
	c->nfunc = im->nfuncs;
	if (!arity)
		return;
	ar = fi_arena_alloc(a, im->nfuncs);
	if (!ar) {
		*f = true;
		return;
	}
	for (size_t i = 0; i < im->nfuncs; i++)
		ar[i] = im->funcs[i].arity;
	c->func_arity = ar;
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

/* The bitmap of @c's known entries for the coarse check (coarse.h). */
static const uint64_t *fi_arena_coarse(struct fi_arena *a,
				       const struct fi_module *c,
				       const struct fi_image *im, bool *f)
{
	size_t words = fi_coarse_module_words(c, im);
	uint64_t *bits = words ? fi_arena_alloc(a, words * sizeof(*bits)) : NULL;

	if (words && !bits) {
		*f = true;
		return NULL;
	}
	if (bits) {
		memset(bits, 0, words * sizeof(*bits));
		fi_coarse_module_fill(bits, c, im);
	}
	return bits;
}

struct fi_module *fi_arena_freeze(struct fi_arena *a, const struct fi_module *m)
{
	struct fi_module *c = fi_arena_alloc(a, sizeof(*c));
	bool fail = false;

	if (!c)
		return NULL;
	*c = *m;
	c->stock = m->stock || fi_image_stock(&m->img);
	c->func_off = NULL;
	c->func_arity = NULL;
	c->fp_site = NULL;
	c->nfunc = c->nfp = 0;
	fi_arena_sites(a, c, &m->img, &fail);
	c->coarse_bits = fail ? NULL : fi_arena_coarse(a, c, &m->img, &fail);
	fi_arena_image(a, &c->img, &fail);
	/* A half copy leaks its bytes into the arena; nothing points at it. */
	return fail ? NULL : c;
}
