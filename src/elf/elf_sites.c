/* SPDX-License-Identifier: MIT */
/*
 * Site discovery (docs/sequences.md): preambles from
 * __patchable_function_entries and __cfi_<name> symbols, call sites from
 * .kcfi_traps, thunk calls without a check, naked ENDBRs, and the mode the
 * sites are in. Bytes are read through the image's views only, so the same
 * code classifies a file, a live module or a scratch copy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf_int.h"
#include "index.h"

/* The 11 patchable-entry nops follow the kCFI preamble's movl. */
#define FI_SLOT_NOPS	(FI_KCFI_PREAMBLE_HASH + 4)

void fi_elf_free_sites(struct fi_image *im)
{
	free(im->funcs);
	free(im->calls);
	free(im->tcalls);
	free(im->scalls);
	free(im->naked);
	free(im->bad);
	im->funcs = NULL;
	im->calls = NULL;
	im->tcalls = NULL;
	im->scalls = NULL;
	im->nscalls = 0;
	im->naked = NULL;
	im->bad = NULL;
	im->nfuncs = im->ncalls = im->ntcalls = im->nnaked = im->nbad = 0;
	im->nslots = 0;
	im->is_stock = false;
	memset(im->arity_hist, 0, sizeof(im->arity_hist));
}

static void fi_add_bad(struct fi_image *im, uint64_t addr, const char *what)
{
	im->bad[im->nbad++] = (struct fi_bad){ .addr = addr, .what = what };
}

/*
 * The executable view of the previous lookup. Sites come sorted, so nearly
 * every one lies in the view of the one before: asked first, before
 * fi_image_text()'s walk (exec views do not overlap, so the answer is the
 * same).
 */
struct fi_twin {
	const struct fi_view *v;
};

static inline __attribute__((always_inline))
const uint8_t *fi_text_at(const struct fi_image *im, struct fi_twin *w,
			  uint64_t addr, size_t len)
{
	const struct fi_view *v = w->v;

	if (v && addr >= v->vaddr && fi_in_bounds(addr - v->vaddr, len, v->size))
		return v->mem + (addr - v->vaddr);
	for (size_t i = 0; i < im->nviews; i++) {
		v = &im->views[i];
		if (v->exec && addr >= v->vaddr &&
		    fi_in_bounds(addr - v->vaddr, len, v->size)) {
			w->v = v;
			return v->mem + (addr - v->vaddr);
		}
	}
	return NULL;
}

static inline uint64_t fi_load64s(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The compiler's kCFI preamble, the form nearly every preamble has at
 * start-up: fi_match_kcfi_preamble's test (the movl's opcode range, bytes
 * 5..15 as in the template) made on two words, without a call. Anything
 * else gets fi_classify_preamble.
 */
static inline __attribute__((always_inline))
bool fi_kcfi_preamble_fast(const uint8_t *p, uint32_t *hash, int *arity)
{
	const uint8_t *t = fi_seq_kcfi_preamble.bytes;
	uint8_t r = (uint8_t)(p[0] - t[0]);

	if (r > FI_MAX_ARITY || fi_load64s(p + 8) != fi_load64s(t + 8) ||
	    (fi_load64s(p) ^ fi_load64s(t)) >> 40)
		return false;
	*hash = fi_load32(p + FI_KCFI_PREAMBLE_HASH);
	*arity = r;
	return true;
}

/* Arity of a BHI preamble, from which __bhi_args slot its call reaches. */
static int fi_bhi_arity(const struct fi_image *im, uint64_t target)
{
	uint64_t base = im->bhi_args ? im->bhi_args : im->note.bhi_args;
	uint64_t off = target - base;

	if (!base || target < base || off % FI_BHI_SLOT_SIZE ||
	    off / FI_BHI_SLOT_SIZE > FI_MAX_ARITY)
		return -1;
	return (int)(off / FI_BHI_SLOT_SIZE);
}

/* The patchable entry's nops at func-11 .. func-1, as in the kCFI template. */
static inline bool fi_slot_nops(const uint8_t *p)
{
	const uint8_t *t = fi_seq_kcfi_preamble.bytes;

	return fi_load64s(p + 8) == fi_load64s(t + 8) &&
	       !memcmp(p + FI_SLOT_NOPS, t + FI_SLOT_NOPS, 8 - FI_SLOT_NOPS);
}

/* The fi_func of a kCFI preamble at @p (func-16), as fi_probe_preamble makes it. */
static inline __attribute__((always_inline))
struct fi_func fi_kcfi_func(uint64_t func, const uint8_t *p, uint32_t hash,
			    int arity)
{
	return (struct fi_func){
		.addr = func, .hash = hash, .arity = (int8_t)arity,
		.form = FI_PRE_KCFI, .set = FI_SET_V4,
		.endbr = fi_is_endbr(p + FI_PREAMBLE_SIZE),
	};
}

/*
 * The 20 bytes at func-16 .. func+3, classified. Returns false when they
 * are not a preamble we know (@p, if the bytes exist, is set anyway).
 */
static bool fi_probe_preamble(const struct fi_image *im, struct fi_twin *w,
			      uint64_t func, struct fi_func *f,
			      const uint8_t **p)
{
	struct fi_preamble_info info;

	*p = func >= FI_PREAMBLE_SIZE ?
	     fi_text_at(im, w, func - FI_PREAMBLE_SIZE, FI_PREAMBLE_SIZE + 4) :
	     NULL;
	if (!*p)
		return false;
	/* fi_classify_preamble's answer for this form, set v4 */
	if (fi_kcfi_preamble_fast(*p, &info.hash, &info.arity)) {
		*f = fi_kcfi_func(func, *p, info.hash, info.arity);
		return true;
	}
	if (!fi_classify_preamble(*p, func - FI_PREAMBLE_SIZE, &info))
		return false;
	*f = (struct fi_func){
		.addr = func, .hash = info.hash, .arity = (int8_t)info.arity,
		.form = (uint8_t)info.form, .set = (uint8_t)info.set,
		.endbr = fi_is_endbr(*p + FI_PREAMBLE_SIZE),
		/* .has_cfi_sym: fi_mark_cfi_syms, once funcs are sorted */
	};
	if (info.form == FI_PRE_FINEIBT_BHI)
		f->arity = (int8_t)fi_bhi_arity(im, info.bhi_target);
	return true;
}

/*
 * One __patchable_function_entries value (= func - 11). The two forms
 * nearly every entry has come first, inline: a kCFI preamble, and the
 * slot of a function that never got a hash (fi_probe_preamble would find
 * no preamble there: its nops at func-11.. differ from every FineIBT
 * preamble, whose bytes 0..6 fi_classify_preamble compares).
 */
static inline __attribute__((always_inline))
void fi_entry(struct fi_image *im, struct fi_twin *w, uint64_t entry)
{
	uint64_t func = entry + (FI_PREAMBLE_SIZE - FI_SLOT_NOPS);
	const uint8_t *p;
	struct fi_func f;
	uint32_t hash;
	int arity;

	p = func >= FI_PREAMBLE_SIZE ?
	    fi_text_at(im, w, func - FI_PREAMBLE_SIZE, FI_PREAMBLE_SIZE + 4) :
	    NULL;
	if (p && fi_kcfi_preamble_fast(p, &hash, &arity)) {
		im->funcs[im->nfuncs++] = fi_kcfi_func(func, p, hash, arity);
		return;
	}
	if (p && fi_slot_nops(p) && fi_seq_fineibt_preamble.bytes[FI_SLOT_NOPS] !=
	    fi_seq_kcfi_preamble.bytes[FI_SLOT_NOPS]) {
		im->nslots++;
		return;
	}
	if (fi_probe_preamble(im, w, func, &f, &p)) {
		im->funcs[im->nfuncs++] = f;
		return;
	}
	if (!p) {
		fi_add_bad(im, func, "patchable entry outside text");
		return;
	}
	/* Only the nops: a function that never got a hash. */
	if (fi_slot_nops(p))
		im->nslots++;
	else
		fi_add_bad(im, func, "preamble");
}

static int fi_cmp_func(const void *a, const void *b)
{
	const struct fi_func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Entries arrive sorted, so this is usually one linear check. */
static void fi_sort_funcs(struct fi_image *im)
{
	for (size_t i = 1; i < im->nfuncs; i++) {
		if (im->funcs[i - 1].addr > im->funcs[i].addr) {
			if (fi_sort_by_addr(im->funcs, im->nfuncs, sizeof(*im->funcs)))
				qsort(im->funcs, im->nfuncs, sizeof(*im->funcs),
				      fi_cmp_func);
			return;
		}
	}
}

static bool fi_find_func(const struct fi_func *f, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f[mid].addr == addr)
			return true;
		if (f[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool fi_is_entry(const struct fi_image *im, uint64_t func)
{
	/* Images read in place have no __cfi_ symbols to ask about. */
	if (im->elf->pfe)
		return false;
	return fi_bsearch_u64(im->elf->entries, im->elf->nentries,
			      func - (FI_PREAMBLE_SIZE - FI_SLOT_NOPS));
}

/*
 * A stock kCFI preamble (insn.h, fi_match_stock_preamble) at @func - 16,
 * where a __cfi_ symbol says one starts: the hash right before @func.
 */
static bool fi_stock_preamble(const struct fi_image *im, struct fi_twin *w,
			      uint64_t func, struct fi_func *f)
{
	const uint8_t *p;
	uint32_t hash;
	int arity;

	p = func >= FI_PREAMBLE_SIZE ?
	    fi_text_at(im, w, func - FI_PREAMBLE_SIZE, FI_PREAMBLE_SIZE + 4) :
	    NULL;
	if (!p || !fi_match_stock_preamble(p, &hash, &arity))
		return false;
	*f = (struct fi_func){
		.addr = func, .hash = hash, .arity = (int8_t)arity,
		.form = FI_PRE_KCFI, .set = FI_SET_V4, .stock = true,
		.endbr = fi_is_endbr(p + FI_PREAMBLE_SIZE),
	};
	return true;
}

/*
 * __cfi_<name> symbols: a preamble the entries missed (a module built
 * without -fpatchable-function-entry) is taken from the symbol; a symbol
 * over bytes that are no preamble is inconsistent.
 */
static void fi_cfi_syms(struct fi_image *im)
{
	size_t n = im->nfuncs, k = 0;
	struct fi_twin w = { NULL };

	/* Both sorted: walk them together (funcs[0..n) only: the ones added
	 * here are appended). A wrapped address falls back to a search. */
	for (size_t i = 0; i < im->elf->ncfi; i++) {
		uint64_t func = im->elf->cfi[i] + FI_PREAMBLE_SIZE;
		const uint8_t *p;
		struct fi_func f;
		bool known;

		while (k < n && im->funcs[k].addr < func)
			k++;
		known = func < FI_PREAMBLE_SIZE ? fi_find_func(im->funcs, n, func) :
			k < n && im->funcs[k].addr == func;
		if (known)
			continue;
		if (!fi_is_entry(im, func) && fi_probe_preamble(im, &w, func, &f, &p))
			im->funcs[im->nfuncs++] = f;
		else if (!fi_is_entry(im, func) && fi_stock_preamble(im, &w, func, &f))
			im->funcs[im->nfuncs++] = f;
		else
			fi_add_bad(im, func, "__cfi_ symbol without preamble");
	}
	if (im->nfuncs != n)
		fi_sort_funcs(im);
}

/*
 * A plain FineIBT preamble carries no arity. Under BHI it is the form of
 * the arity-0 functions (the others call __bhi_args[n]); otherwise the
 * arity is unknown.
 */
static void fi_fineibt_arity(struct fi_image *im)
{
	bool bhi = im->note.present && (im->note.cfg.flags & FINEIBT_F_BHI);

	for (size_t i = 0; i < im->nfuncs; i++)
		bhi |= im->funcs[i].form == FI_PRE_FINEIBT_BHI ||
		       im->funcs[i].form == FI_PRE_FINEIBT_ARITY1;
	for (size_t i = 0; i < im->nfuncs; i++) {
		if (im->funcs[i].form == FI_PRE_FINEIBT)
			im->funcs[i].arity = bhi ? 0 : -1;
	}
}

/* funcs and cfi symbols (func - 16) are both sorted: walk them together. */
static void fi_mark_cfi_syms(struct fi_image *im)
{
	const uint64_t *cfi = im->elf->cfi;
	size_t n = im->elf->ncfi, k = 0;

	/* none: every fi_func was made with has_cfi_sym false */
	for (size_t i = 0; n && i < im->nfuncs; i++) {
		uint64_t pre = im->funcs[i].addr - FI_PREAMBLE_SIZE;

		while (k < n && cfi[k] < pre)
			k++;
		im->funcs[i].has_cfi_sym = k < n && cfi[k] == pre;
	}
}

/* Sorted funcs: keep the first of each address (an entry listed twice). */
static void fi_dedup_funcs(struct fi_image *im)
{
	size_t out = im->nfuncs ? 1 : 0;

	for (size_t i = 1; i < im->nfuncs; i++) {
		if (im->funcs[i].addr != im->funcs[out - 1].addr)
			im->funcs[out++] = im->funcs[i];
	}
	im->nfuncs = out;
}

/* The loaded module's own __patchable_function_entries (elf->pfe). */
static void fi_entries_in_place(struct fi_image *im)
{
	const struct fi_elf *elf = im->elf;
	struct fi_twin w = { NULL };
	size_t first = im->nfuncs;
	bool ordered = true;	/* strictly increasing: no sort, no dedup */
	/* Run-time values, or link-time ones (elf->pfe_linked). */
	uint64_t sub = elf->pfe_linked ? 0 : im->bias;

	for (size_t i = 0; i < elf->npfe; i++) {
		size_t n = im->nfuncs;
		uint64_t v;

		__builtin_memcpy(&v, elf->pfe + i * 8, sizeof(v));
		if (!v || v == sub)
			continue;
		fi_entry(im, &w, v - sub);
		if (n > first && im->nfuncs > n &&
		    im->funcs[n].addr <= im->funcs[n - 1].addr)
			ordered = false;
	}
	if (first || !ordered) {
		fi_sort_funcs(im);
		fi_dedup_funcs(im);
	}
}

static void fi_discover_preambles(struct fi_image *im)
{
	struct fi_twin w = { NULL };

	for (size_t i = 0; i < im->elf->nentries; i++)
		fi_entry(im, &w, im->elf->entries[i]);
	if (im->elf->pfe)
		fi_entries_in_place(im);
	/* in place alone: fi_entries_in_place left them sorted */
	if (im->elf->nentries || !im->elf->pfe)
		fi_sort_funcs(im);
	fi_cfi_syms(im);
	fi_mark_cfi_syms(im);
	fi_fineibt_arity(im);
}

/*
 * A re-scan (live bytes, after patching) can lose the arity the compiler
 * wrote (plain FineIBT carries none): keep what an earlier scan of the
 * same image knew. Both arrays are sorted by address.
 */
static void fi_keep_arity(struct fi_image *im, const struct fi_func *old,
			  size_t nold)
{
	size_t k = 0;

	for (size_t i = 0; i < im->nfuncs && k < nold; i++) {
		while (k < nold && old[k].addr < im->funcs[i].addr)
			k++;
		if (k < nold && old[k].addr == im->funcs[i].addr &&
		    im->funcs[i].arity < 0)
			im->funcs[i].arity = old[k].arity;
	}
}

static void fi_arity_hist(struct fi_image *im)
{
	for (size_t i = 0; i < im->nfuncs; i++) {
		int a = im->funcs[i].arity;

		if (a >= 0 && a <= FI_MAX_ARITY)
			im->arity_hist[a]++;
	}
}

/*
 * The compiler's kCFI call site with its cs call through a thunk, the form
 * nearly every call site has at start-up, tested as fi_classify_caller's
 * first branch tests it (fi_match_kcfi_check, then fi_kcfi_caller) but on
 * words, with the templates read once per image. @ok false: a layout the
 * lane does not know (every site then gets fi_classify_caller).
 */
struct fi_call_lane {
	bool ok;
	uint64_t check[FI_NSETS];	/* bytes 6..13 of each set's check */
	uint16_t mov, off;		/* bytes 0..1: movl, or eb 0c */
	uint8_t cs, call, jmp;		/* bytes 14, 15 of a thunk call/jmp */
};

static void fi_call_lane_init(struct fi_call_lane *l)
{
	const uint8_t *k = fi_seq_kcfi_caller.bytes;

	l->ok = fi_seq_caller_off.len == 2 &&
		fi_seq_kcfi_caller.hash == FI_KCFI_CALLER_HASH &&
		FI_KCFI_CALLER_HASH == 2 && FI_KCFI_CALLER_CALL == 14 &&
		fi_seq_thunk_call.len == FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL;
	for (int set = 0; set < FI_NSETS; set++) {
		const struct fi_seq *t = fi_set_forms(set)->kcfi_caller[0];

		l->ok &= t->hash == FI_KCFI_CALLER_HASH && t->len >= 14;
		l->check[set] = fi_load64s(t->bytes + 6);
	}
	__builtin_memcpy(&l->mov, k, 2);
	__builtin_memcpy(&l->off, fi_seq_caller_off.bytes, 2);
	l->cs = fi_seq_thunk_call.bytes[0];
	l->call = fi_seq_thunk_call.bytes[1];
	l->jmp = fi_seq_thunk_jmp.bytes[1];
}

static inline __attribute__((always_inline))
bool fi_kcfi_caller_fast(const struct fi_call_lane *l, const uint8_t *p,
			 uint64_t site, struct fi_caller_info *info)
{
	uint64_t check = fi_load64s(p + 6);
	uint16_t op;
	int set;

	for (set = 0; set < FI_NSETS && check != l->check[set]; set++)
		;
	if (set == FI_NSETS || p[14] != l->cs ||
	    (p[15] != l->call && p[15] != l->jmp))
		return false;
	__builtin_memcpy(&op, p, 2);
	if (op == l->mov)
		info->form = FI_CALL_KCFI;
	else if (op == l->off)
		info->form = FI_CALL_OFF;
	else
		return false;
	info->set = set;
	info->jmp = p[15] == l->jmp;
	info->thunk = site + FI_CALLSITE_SIZE +
		      (uint64_t)(int64_t)(int32_t)fi_load32(p + 16);
	info->hash = -fi_load32(p + FI_KCFI_CALLER_HASH);
	return true;
}

/* Record the call site at @site as @info tells (fi_discover_calls). */
static inline __attribute__((always_inline))
void fi_put_call(struct fi_image *im, struct fi_call *out, uint64_t site,
		 const struct fi_caller_info *info)
{
	*out = (struct fi_call){
		.addr = site, .hash = info->hash, .jmp = info->jmp,
		.form = (uint8_t)info->form, .set = (uint8_t)info->set,
	};
	/* kCFI calls go through the r11 thunk: learn it without symbols. */
	if (info->form != FI_CALL_FINEIBT && info->form != FI_CALL_PARANOID &&
	    !im->thunks[11] && fi_image_text(im, info->thunk, 1))
		im->thunks[11] = info->thunk;
}

/*
 * A stock kCFI call site whose ud2 is at @ud (docs/compat.md, "Stock kCFI
 * modules"): recorded in im->scalls, in .kcfi_traps order (sorted).
 */
static bool fi_stock_call(struct fi_image *im, struct fi_twin *w, uint64_t ud)
{
	const size_t before = FI_KCFI_CALLER_UD + 1;
	size_t after = 5;	/* ud2 + the longest call; 4 at the text's end */
	struct fi_stock_site s;
	const uint8_t *p;

	if (ud < before)
		return false;
	p = fi_text_at(im, w, ud - before, before + after);
	if (!p)
		p = fi_text_at(im, w, ud - before, before + --after);
	if (!p || !im->scalls ||
	    !fi_match_stock_site(p + before, before, after, &s))
		return false;
	im->scalls[im->nscalls++] = (struct fi_scall){
		.addr = ud - s.ud, .s = s,
	};
	return true;
}

/*
 * The lane's answer and the classifier's are kept apart (fast, slow), and
 * the count and array in locals: the fast one then lives in registers, not
 * in a struct whose address went to fi_classify_caller.
 */
static void fi_discover_calls(struct fi_image *im)
{
	size_t n = fi_image_ntraps(im), nc = im->ncalls;
	struct fi_call *calls = im->calls;
	struct fi_twin w = { NULL };
	struct fi_call_lane lane;

	fi_call_lane_init(&lane);
	for (size_t i = 0; i < n; i++) {
		uint64_t ud = fi_trap_at(im, i), site = ud - FI_KCFI_CALLER_UD;
		struct fi_caller_info fast, slow;
		const uint8_t *p;

		p = fi_text_at(im, &w, site, FI_CALLSITE_SIZE);
		if ((!p || ud < FI_KCFI_CALLER_UD) && fi_stock_call(im, &w, ud))
			continue;	/* a stock site ends before 20 bytes */
		if (!p || ud < FI_KCFI_CALLER_UD) {
			fi_add_bad(im, ud, "call site outside text");
			continue;
		}
		if (lane.ok && fi_kcfi_caller_fast(&lane, p, site, &fast)) {
			fi_put_call(im, &calls[nc++], site, &fast);
			continue;
		}
		if (!fi_classify_caller(p, site, &slow)) {
			if (!fi_stock_call(im, &w, ud))
				fi_add_bad(im, site, "call site");
			continue;
		}
		fi_put_call(im, &calls[nc++], site, &slow);
	}
	im->ncalls = nc;
}

static int fi_add_tcall(struct fi_image *im, size_t *cap,
			const struct fi_tcall *t)
{
	if (im->ntcalls == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct fi_tcall *n = realloc(im->tcalls, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		im->tcalls = n;
		*cap = ncap;
	}
	im->tcalls[im->ntcalls++] = *t;
	return 0;
}

/* The lowest register whose thunk is @target, or -1. */
static int fi_thunk_reg_of(const struct fi_image *im, uint64_t target)
{
	for (int r = 0; r < 16; r++) {
		if (im->thunks[r] && im->thunks[r] == target)
			return r;
	}
	return -1;
}

/*
 * A "2e e8/e9 rel32" at @p (@ip) reaching one of the thunks. Decoded
 * once, then compared; @last remembers the previous answer, since almost
 * every such call goes through the same thunk (r11).
 */
static bool fi_thunk_at(const struct fi_image *im, const uint8_t *p,
			uint64_t ip, struct fi_tcall *t, uint64_t last[2])
{
	uint64_t target;
	int r;

	if (!fi_decode_thunk_call(p, ip, &target, &t->jmp))
		return false;
	if (last[0] && target == last[0])
		r = (int)last[1];
	else if ((r = fi_thunk_reg_of(im, target)) >= 0)
		last[0] = target, last[1] = (uint64_t)r;
	else
		return false;
	t->addr = ip;
	t->thunk = target;
	t->reg = r;
	return true;
}

/*
 * Is @site a known kCFI call site? The scan asks in increasing address
 * order (views are sorted and disjoint), so a cursor into the sorted
 * calls answers without a search; a step back restarts it.
 */
static bool fi_is_call_site_from(const struct fi_image *im, uint64_t site,
				 size_t *cursor)
{
	size_t c = *cursor;

	if (c && c <= im->ncalls && im->calls[c - 1].addr >= site)
		c = 0;
	while (c < im->ncalls && im->calls[c].addr < site)
		c++;
	*cursor = c;
	return c < im->ncalls && im->calls[c].addr == site;
}

/*
 * The module index's list of thunk calls without a check (imgindex.c),
 * taken instead of the scan below when every entry is one: in the text,
 * increasing, a thunk call (the same decoding as the scan) to one of the
 * module's thunks, and not the tail of a kCFI call site. The first entry
 * that is not refuses the whole list (1: the caller scans, and
 * tcall_list_bad says why): a list that is wrong in one place says
 * nothing about the calls it may be missing either.
 */
static int fi_listed_tcalls(struct fi_image *im, size_t *cap)
{
	struct fi_elf *elf = im->elf;
	const size_t len = fi_seq_thunk_call.len;
	uint64_t last[2] = { 0, 0 }, prev = 0;
	size_t cursor = 0;
	struct fi_twin w = { NULL };

	if (elf->ntcall_list > FI_INDEX_TCALLS_MAX) {
		elf->tcall_list_bad = "more entries than the list holds";
		return 1;
	}
	for (size_t i = 0; i < elf->ntcall_list; i++) {
		int32_t off;
		uint64_t ip;
		const uint8_t *p;
		struct fi_tcall t;

		memcpy(&off, &elf->tcall_list[i], sizeof(off));
		ip = elf->tcall_base + (uint64_t)(int64_t)off;
		p = fi_text_at(im, &w, ip, len);
		if (!p || (i && ip <= prev)) {
			elf->tcall_list_bad = p ? "entries not increasing" :
						  "entry outside the text";
			return 1;
		}
		prev = ip;
		if (!fi_thunk_at(im, p, ip, &t, last) ||
		    (ip >= FI_KCFI_CALLER_CALL &&
		     fi_is_call_site_from(im, ip - FI_KCFI_CALLER_CALL, &cursor))) {
			elf->tcall_list_bad = "entry not a thunk call without "
					      "a check";
			return 1;
		}
		if (fi_add_tcall(im, cap, &t))
			return -ENOMEM;
	}
	return 0;
}

/* Thunk calls that are not the tail of a known kCFI call site. */
static int fi_discover_tcalls(struct fi_image *im)
{
	const uint8_t cs = fi_seq_thunk_call.bytes[0];
	const size_t len = fi_seq_thunk_call.len;
	size_t cap = 0, cursor = 0;
	uint64_t last[2] = { 0, 0 };
	bool any = false;
	int ret;

	im->elf->tcall_list_bad = NULL;
	if (!im->elf->no_tcalls && im->elf->has_tcall_list) {
		ret = fi_listed_tcalls(im, &cap);
		if (ret <= 0)
			return ret;
		im->ntcalls = 0;	/* refused: the scan decides */
	}
	for (int r = 0; r < 16 && !im->elf->no_tcalls; r++)
		any |= im->thunks[r] != 0;
	for (size_t i = 0; any && i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];
		const uint8_t *p = v->mem, *end = v->mem + v->size;
		struct fi_tcall t;

		if (!v->exec || v->size < len)
			continue;
		while ((p = memchr(p, cs, (size_t)(end - p) - (len - 1)))) {
			uint64_t ip = v->vaddr + (uint64_t)(p - v->mem);

			if (fi_thunk_at(im, p, ip, &t, last) &&
			    !(ip >= FI_KCFI_CALLER_CALL &&
			      fi_is_call_site_from(im, ip - FI_KCFI_CALLER_CALL,
						   &cursor)) &&
			    fi_add_tcall(im, &cap, &t))
				return -ENOMEM;
			if ((size_t)(end - ++p) < len)
				break;
		}
	}
	return 0;
}

static bool fi_in_stubs(const struct fi_elf *elf, uint64_t addr)
{
	for (size_t i = 0; i < elf->nstubs; i++) {
		if (addr >= elf->stub_lo[i] && addr < elf->stub_hi[i])
			return true;
	}
	return false;
}

/*
 * Function symbols entered by an exact ENDBR but carrying no hash check.
 * Symbols and funcs are both sorted by address: walk them together.
 */
static void fi_discover_naked(struct fi_image *im)
{
	size_t f = 0;
	struct fi_twin w = { NULL };

	for (size_t i = 0; i < im->nsyms; i++) {
		uint64_t a = im->syms[i].addr;
		const uint8_t *p;
		uint32_t v;

		while (f < im->nfuncs && im->funcs[f].addr < a)
			f++;
		if (f < im->nfuncs && im->funcs[f].addr == a)
			continue;
		p = fi_text_at(im, &w, a, 4);
		if (!p || fi_in_stubs(im->elf, a))
			continue;
		v = fi_load32(p);
		if (v == FI_ENDBR64_VAL || v == FI_ENDBR32_VAL)
			im->naked[im->nnaked++] = a;
	}
}

int fi_image_rescan_tcalls(struct fi_image *im)
{
	free(im->tcalls);
	im->tcalls = NULL;
	im->ntcalls = 0;
	return fi_discover_tcalls(im);
}

/* What fi_image_stock answers, from the sites: once a discovery. */
static bool fi_image_find_stock(const struct fi_image *im)
{
	/* A check in no form we know (the thunk flags without patchable
	 * entries, say) is no stock module: FI_UNPREFIXED_HINT's case. */
	for (size_t i = 0; i < im->nbad; i++) {
		if (!strncmp(im->bad[i].what, "call site", 9))
			return false;
	}
	if (im->nscalls)
		return true;
	for (size_t i = 0; i < im->nfuncs; i++) {
		if (im->funcs[i].stock)
			return true;
	}
	return false;
}

int fi_elf_discover(struct fi_image *im)
{
	const struct fi_elf *elf = im->elf;
	size_t nf = elf->nentries + elf->npfe + elf->ncfi, nold = im->nfuncs;
	struct fi_func *old = im->funcs;

	im->funcs = NULL;	/* kept for fi_keep_arity */
	fi_elf_free_sites(im);
	/*
	 * Bounds, not sizes: only the first n of each are ever written and
	 * read, so no zeroing (calloc cleared bad[] for every site, and
	 * touched its pages, at each start-up).
	 */
	im->funcs = malloc((nf + 1) * sizeof(*im->funcs));
	im->calls = malloc((fi_image_ntraps(im) + 1) * sizeof(*im->calls));
	im->scalls = malloc((fi_image_ntraps(im) + 1) * sizeof(*im->scalls));
	im->naked = malloc((im->nsyms + 1) * sizeof(*im->naked));
	im->bad = malloc((nf + fi_image_ntraps(im) + 1) * sizeof(*im->bad));
	if (!im->funcs || !im->calls || !im->scalls || !im->naked || !im->bad) {
		free(old);
		return -ENOMEM;
	}
	fi_discover_preambles(im);
	fi_keep_arity(im, old, nold);
	free(old);
	fi_arity_hist(im);
	fi_discover_calls(im);
	fi_discover_naked(im);
	im->is_stock = fi_image_find_stock(im);
	return fi_discover_tcalls(im);
}

/* ------------------------------------------------------------- mode */

struct fi_form_counts {
	size_t kcfi_call, off_call, fineibt_call, paranoid_call;
	size_t kcfi_pre, fineibt_pre, bhi_pre;
	/*
	 * Sites in a form only v6.18 writes, and FineIBT sites in v4's own
	 * forms (the compiler's kCFI forms belong to neither set).
	 */
	size_t v618, v4;
};

/*
 * One histogram increment per site (form x set), folded into the counts
 * afterwards: this runs over every site at each start-up and dlopen.
 * Forms and sets outside the enums count in their own last row.
 */
#define FI_NFORMS	8
#define FI_NSETS_H	4

static unsigned int fi_hist_slot(unsigned int form, unsigned int set)
{
	return (form < FI_NFORMS ? form : FI_NFORMS - 1) * FI_NSETS_H +
	       (set < FI_NSETS_H ? set : FI_NSETS_H - 1);
}

static void fi_count_set(struct fi_form_counts *c, bool fineibt, int set,
			 size_t n)
{
	if (set == FI_SET_V618)
		c->v618 += n;
	else if (fineibt)
		c->v4 += n;
}

static void fi_count_forms(const struct fi_image *im, struct fi_form_counts *c)
{
	size_t call[FI_NFORMS * FI_NSETS_H] = { 0 };
	size_t pre[FI_NFORMS * FI_NSETS_H] = { 0 };

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < im->ncalls; i++)
		call[fi_hist_slot(im->calls[i].form, im->calls[i].set)]++;
	for (size_t i = 0; i < im->nfuncs; i++) {
		/* without an ENDBR the passes leave a preamble alone */
		pre[fi_hist_slot(im->funcs[i].form, im->funcs[i].set)] +=
			im->funcs[i].endbr;
	}
	for (unsigned int k = 0; k < FI_NFORMS * FI_NSETS_H; k++) {
		unsigned int form = k / FI_NSETS_H, set = k % FI_NSETS_H;
		size_t n = call[k];

		if (!n && !pre[k])
			continue;
		switch (form) {
		case FI_CALL_KCFI:	c->kcfi_call += n; break;
		case FI_CALL_OFF:	c->off_call += n; break;
		case FI_CALL_PARANOID:	c->paranoid_call += n; break;
		default:		c->fineibt_call += n; break;
		}
		/* a FineIBT caller still calling through a thunk: either set */
		fi_count_set(c, form == FI_CALL_FINEIBT ||
			     form == FI_CALL_PARANOID, (int)set, n);
		n = pre[k];
		switch (form) {
		case FI_PRE_KCFI:	c->kcfi_pre += n; break;
		case FI_PRE_FINEIBT:	c->fineibt_pre += n; break;
		default:		c->bhi_pre += n; break;
		}
		fi_count_set(c, form != FI_PRE_KCFI, (int)set, n);
	}
}

int fi_image_set(const struct fi_image *im)
{
	struct fi_form_counts c;

	fi_count_forms(im, &c);
	if (c.v618 && c.v4)
		return -1;
	if (c.v618 || c.v4)
		return c.v618 ? FI_SET_V618 : FI_SET_V4;
	return -ENOENT;
}

/*
 * fi_count_forms puts a call site anywhere but kcfi_call unless its form
 * is FI_CALL_KCFI, and a preamble with an ENDBR anywhere but kcfi_pre
 * unless FI_PRE_KCFI; with none elsewhere fi_image_mode says KCFI (v4
 * counts only FineIBT forms, so nothing is mixed), and otherwise it says
 * OFF, FINEIBT or mixed.
 */
bool fi_image_is_kcfi_mode(const struct fi_image *im)
{
	for (size_t i = 0; i < im->ncalls; i++) {
		if (im->calls[i].form != FI_CALL_KCFI)
			return false;
	}
	for (size_t i = 0; i < im->nfuncs; i++) {
		if (im->funcs[i].endbr && im->funcs[i].form != FI_PRE_KCFI)
			return false;
	}
	return true;
}

int fi_image_mode(const struct fi_image *im, struct fineibt_config *cfg)
{
	struct fineibt_config out = { .mode = FINEIBT_MODE_KCFI };
	struct fi_form_counts c;
	bool mixed = false;

	fi_count_forms(im, &c);
	if (c.fineibt_call + c.paranoid_call + c.fineibt_pre + c.bhi_pre) {
		out.mode = FINEIBT_MODE_FINEIBT;
		mixed = c.kcfi_call + c.off_call + c.kcfi_pre ||
			(c.fineibt_call && c.paranoid_call);
		if (c.paranoid_call > c.fineibt_call)
			out.flags |= FINEIBT_F_PARANOID;
		if (c.bhi_pre)
			out.flags |= FINEIBT_F_BHI;
	} else if (c.off_call) {
		out.mode = FINEIBT_MODE_OFF;
		mixed = c.kcfi_call != 0;
	}
	/* The sequence set shows in the bytes (docs/sequences.md). */
	if (c.v618)
		out.flags |= FINEIBT_F_SEQ_V618;
	mixed |= c.v618 && c.v4;
	if (im->note.present && im->note.cfg.mode == out.mode)
		out.flags |= im->note.cfg.flags & (FINEIBT_F_RAND | FINEIBT_F_WARN);
	if (cfg)
		*cfg = out;
	return mixed ? -1 : (int)out.mode;
}

bool fi_image_coarse_thunks(const struct fi_image *im)
{
	bool any = false;

	for (int r = 0; r < 16; r++) {
		const uint8_t *p;

		if (!im->thunks[r])
			continue;
		/* At least the shortest form (rax: 21 bytes) is there. */
		p = fi_image_text(im, im->thunks[r], 21);
		if (!p || !fi_match_coarse_thunk(p, fi_image_text(im, im->thunks[r],
				FI_COARSE_THUNK_MAX) ? FI_COARSE_THUNK_MAX : 21,
						 im->thunks[r], r, NULL))
			return false;
		any = true;
	}
	return any;
}
