/* SPDX-License-Identifier: MIT */
/*
 * The rewriting passes over one image: the kernel's __apply_fineibt() and
 * its helpers (cfi_rand_preamble, cfi_rand_callers, cfi_disable_callers,
 * cfi_enable_callers, cfi_rewrite_preamble, cfi_rewrite_callers,
 * cfi_rewrite_endbr), plus the de-thunking the kernel leaves to
 * apply_retpolines().
 *
 * The kernel runs these as separate sweeps over live text and has to order
 * them (disable callers first, poison ENDBR last) so that nothing executes
 * a half-patched pair. Here the text being written is a file buffer or a
 * scratch copy that nothing executes until the caller maps it in, so each
 * site is rewritten in one visit: its new bytes are computed from the
 * templates of insn.c and its window is written once, if it changed.
 *
 * Consistency of hashes: with RAND, every kCFI preamble (with or without
 * an ENDBR at func+0) and every caller is rehashed with the same key, in
 * every mode, exactly as cfi_rand_preamble/cfi_rand_callers do before the
 * mode switch. A caller/callee pair that matched before still matches,
 * whatever form each one ends up in. A preamble without ENDBR (its address
 * never escapes) keeps its kCFI form in fineibt mode, like the kernel's
 * cfi_rewrite_preamble: it needs no check and its func+0 is not touched.
 *
 * Nothing is written before the whole image has been checked: an image
 * with any site already in a rewritten form, or carrying a .fineibt note,
 * is refused with -EALREADY; BHI options that cannot be honoured are
 * refused with -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "patch.h"
#include "print.h"

/* The preamble window: func-16 .. func+3 (the arity-1 form reaches func+3). */
#define FI_MAX_COPIES	16
#define FI_PRE_WINDOW	(FI_PREAMBLE_SIZE + 4)
#define FI_R11		11

/* The executable view last read through, as fi_image_text() gave it. */
struct fi_window {
	uint64_t lo, hi;
	uint8_t *mem;
};

/*
 * Rehashed values already computed in this pass, by compile-time hash: a
 * program has far fewer types than sites (gen_big: 8 for 200k sites), and
 * the keyed rehash (about 1,000 instructions) is the costliest step of a
 * site. Two levels: small direct-mapped memos on the patching thread's
 * stack (the lanes' hot path), in front of one table of every type the
 * pass rehashed (struct fi_types, on the heap, grown as needed), so each
 * distinct type is rehashed once per pass however the memos collide
 * (sqlite: 167 types; 348 rehashes with the memos alone). Neither holds
 * the key: only (compile-time, run-time) pairs, which the rewritten text
 * shows anyway.
 */
#define FI_MEMO_BITS	6
struct fi_memo {
	uint32_t key[1 << FI_MEMO_BITS];
	uint32_t val[1 << FI_MEMO_BITS];
	uint8_t ok[1 << FI_MEMO_BITS];
};

/* Open addressing, linear probing; cap a power of two, at most half full. */
struct fi_types {
	uint32_t *in, *out;
	uint8_t *used;
	size_t cap, n;
};

#define FI_TYPES_MIN	16

/* A verification's copies and how far each is verified (fi_patch_verify). */
struct fi_check {
	const struct fi_patch_copy *cp;
	size_t n, last;
	uint64_t cur[FI_MAX_COPIES];
};

struct fi_pass {
	struct fi_image *im;
	const struct fi_patch_opts *o;
	struct fi_patch_stats *st;
	uint64_t bias;		/* link-time -> the address text runs at */
	bool fineibt, paranoid, bhi, warn;
	int set;		/* FI_SET_*: the sequences written */
	bool inline1;		/* the set's arity-1 inline form is used */
	bool poison_all;	/* the set's preamble traps in the poison */
	/*
	 * A stock kCFI module (docs/compat.md): its ENDBRs say nothing of
	 * which functions escape (-fcf-protection may be absent), so every
	 * preamble takes the FineIBT form in the FineIBT modes.
	 */
	bool stock;
	struct fi_window win;
	struct fi_check *check;			/* verify instead of writing */
	struct fi_memo *memo;			/* NULL: rehash every site */
	struct fi_types types;			/* every type rehashed so far */
};

uint32_t fi_patch_hash(const struct fi_patch_opts *o, uint32_t hash)
{
	if (o->cfg.flags & FINEIBT_F_RAND)
		return fineibt_rehash(hash, &o->key);
	return hash;
}

static void fi_types_free(struct fi_types *t)
{
	free(t->in);	/* one block: in, out, used */
	*t = (struct fi_types){ 0 };
}

static size_t fi_types_slot(const struct fi_types *t, uint32_t in)
{
	size_t i = (in * 0x9e3779b1u) & (t->cap - 1);

	while (t->used[i] && t->in[i] != in)
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* Twice the room (FI_TYPES_MIN at first); false (table as it was) if none. */
static bool fi_types_grow(struct fi_types *t)
{
	struct fi_types g = { .cap = t->cap ? 2 * t->cap : FI_TYPES_MIN };

	g.in = malloc(g.cap * (2 * sizeof(uint32_t) + 1));
	if (!g.in)
		return false;
	g.out = g.in + g.cap;
	g.used = (uint8_t *)(g.out + g.cap);
	memset(g.used, 0, g.cap);
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->used[i])
			continue;
		j = fi_types_slot(&g, t->in[i]);
		g.in[j] = t->in[i];
		g.out[j] = t->out[i];
		g.used[j] = 1;
	}
	g.n = t->n;
	fi_types_free(t);
	*t = g;
	return true;
}

/* The rehash of @hash, computed once per pass (without memory: every time). */
static __attribute__((noinline)) uint32_t fi_types_rehash(struct fi_pass *ps,
							  uint32_t hash)
{
	struct fi_types *t = &ps->types;
	size_t i;

	if ((2 * (t->n + 1) > t->cap) && !fi_types_grow(t))
		return fineibt_rehash(hash, &ps->o->key);
	i = fi_types_slot(t, hash);
	if (!t->used[i]) {
		t->in[i] = hash;
		t->out[i] = fineibt_rehash(hash, &ps->o->key);
		t->used[i] = 1;
		t->n++;
	}
	return t->out[i];
}

/* fi_patch_hash through the pass's memo. */
static inline __attribute__((always_inline))
uint32_t fi_pass_hash(struct fi_pass *ps, uint32_t hash)
{
	struct fi_memo *m = ps->memo;
	uint32_t i;

	if (!(ps->o->cfg.flags & FINEIBT_F_RAND))
		return hash;
	if (!m)
		return fi_types_rehash(ps, hash);
	i = (hash * 0x9e3779b1u) >> (32 - FI_MEMO_BITS);
	if (!m->ok[i] || m->key[i] != hash) {
		m->key[i] = hash;
		m->val[i] = fi_types_rehash(ps, hash);
		m->ok[i] = 1;
	}
	return m->val[i];
}

/* One pass over @im with options @o: writing, or checking with @ck. */
static struct fi_pass fi_pass_init(struct fi_image *im,
				   const struct fi_patch_opts *o,
				   struct fi_patch_stats *st,
				   struct fi_check *ck)
{
	int set = o->cfg.flags & FINEIBT_F_SEQ_V618 ? FI_SET_V618 : FI_SET_V4;

	return (struct fi_pass){
		.im = im, .o = o, .st = st,
		.bias = im->live ? im->bias : 0,
		.fineibt = o->cfg.mode == FINEIBT_MODE_FINEIBT,
		.paranoid = o->cfg.flags & FINEIBT_F_PARANOID,
		.bhi = o->cfg.flags & FINEIBT_F_BHI,
		.warn = o->cfg.flags & FINEIBT_F_WARN,
		.set = set,
		.inline1 = fi_set_forms(set)->arity1 &&
			   !(o->cfg.flags & FINEIBT_F_WARN),
		.poison_all = fi_set_forms(set)->poison_needed,
		.stock = fi_image_stock(im),
		.check = ck,
	};
}

static const char *fi_pass_path(const struct fi_image *im)
{
	return im->path ? im->path : "(image)";
}

/*
 * @len bytes of text at @addr, or NULL. Sites come sorted, so nearly all
 * of them lie in the view of the previous one: the whole executable view
 * is fetched through fi_image_text() once and reused (exec views do not
 * overlap: the same pointer fi_image_text() gives for @addr, so
 * fi_pass_put() writes a site's window through it).
 */
static inline __attribute__((always_inline))
uint8_t *fi_read(struct fi_pass *ps, uint64_t addr, size_t len)
{
	struct fi_window *w = &ps->win;

	if (addr >= w->lo && addr <= w->hi && len <= w->hi - addr)
		return w->mem + (addr - w->lo);
	for (size_t i = 0; i < ps->im->nviews; i++) {
		const struct fi_view *v = &ps->im->views[i];
		uint8_t *m;

		if (!v->exec || addr < v->vaddr || addr - v->vaddr >= v->size)
			continue;
		m = fi_image_text(ps->im, v->vaddr, v->size);
		if (!m)
			break;
		*w = (struct fi_window){ .lo = v->vaddr, .hi = v->vaddr + v->size,
					 .mem = m };
		if (len <= w->hi - addr)
			return m + (addr - v->vaddr);
		break;
	}
	return fi_image_text(ps->im, addr, len);	/* across views, or none */
}

/* A site left alone: count it and say where, as symbol+offset. */
static void fi_pass_skip(struct fi_pass *ps, uint64_t addr, const char *what,
			 const char *pattern)
{
	char where[256];

	ps->st->skipped++;
	if (ps->o->quiet)
		return;
	fi_image_symbolize(ps->im, addr, where, sizeof(where));
	fi_warn("warning: %s: %s: %s does not match %s; left unpatched\n",
		fi_pass_path(ps->im), where, what, pattern);
}

static uint64_t fi_load64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static void fi_store64(uint8_t *p, uint64_t v)
{
	__builtin_memcpy(p, &v, 8);
}

/* @n bytes at @a and @b are the same (@n >= 8: a site window). */
static inline __attribute__((always_inline))
bool fi_same(const uint8_t *a, const uint8_t *b, size_t n)
{
	if (n < 8)
		return !memcmp(a, b, n);
	for (size_t i = 0; i + 8 < n; i += 8) {
		if (fi_load64(a + i) != fi_load64(b + i))
			return false;
	}
	return fi_load64(a + n - 8) == fi_load64(b + n - 8);
}

static bool fi_check_in(const struct fi_patch_copy *c, uint64_t a, size_t n)
{
	return a >= c->lo && a - c->lo <= c->len && n <= c->len - (a - c->lo);
}

/*
 * Verifying: the copy holds @want at run-time @a, and the original's bytes
 * from where the previous site of that copy ended. Sites come in address
 * order, nearly always in the previous one's copy.
 */
static int fi_check_site(struct fi_check *ck, uint64_t a, const uint8_t *want,
			 size_t n)
{
	size_t i = ck->last;
	const struct fi_patch_copy *c;
	uint64_t cur;

	if (i >= ck->n || !fi_check_in(&ck->cp[i], a, n)) {
		for (i = 0; i < ck->n && !fi_check_in(&ck->cp[i], a, n); i++)
			;
		if (i == ck->n)
			return -EBADMSG;
		ck->last = i;
	}
	c = &ck->cp[i];
	cur = ck->cur[i];
	if (a > cur && memcmp(c->copy + (cur - c->lo),
			      (const void *)(uintptr_t)cur, a - cur))
		return -EBADMSG;
	if (!fi_same(c->copy + (a - c->lo), want, n))
		return -EBADMSG;
	if (a + n > cur)
		ck->cur[i] = a + n;
	return 0;
}

/*
 * Every site's new bytes go through here: the whole window written when it
 * differs from what it holds (the text being written is a file buffer or
 * a scratch copy nothing executes, so rewriting its unchanged bytes with
 * themselves is harmless, and one fixed-size copy costs less than finding
 * the span that differs), or, when verifying, compared whole with the copy
 * at run-time address (*@changed is then left false: a verification keeps
 * no counts).
 *
 * @have is what fi_read() gave for the same @addr and @n: the pointer
 * fi_image_text() gives (fi_image_poke() would write there too), so the
 * window is written in place, counted like fi_image_poke().
 */
static inline __attribute__((always_inline))
int fi_pass_put(struct fi_pass *ps, uint64_t addr, uint8_t *have,
		const uint8_t *want, size_t n, bool *changed)
{
	if (ps->check) {
		*changed = false;
		return fi_check_site(ps->check, addr + ps->bias, want, n);
	}
	*changed = !fi_same(have, want, n);
	if (*changed) {
		__builtin_memcpy(have, want, n);
		ps->im->bytes_written += n;
		ps->im->writes++;
	}
	return 0;
}

/* ---------------------------------------------------------------- forms */

/*
 * The sequences every site of a pass gets, encoded once per pass from the
 * insn.c templates with hash 0; a site then only stores its own hash (and,
 * for a BHI call, its own rel32). Running the encoders per site cost more
 * than all the rest of a pass.
 */
struct fi_forms {
	uint8_t pre[FI_PREAMBLE_SIZE];		/* FineIBT preamble */
	uint8_t inline1[FI_PRE_WINDOW - FI_FINEIBT_PREAMBLE_BHI]; /* arity-1 tail */
	uint8_t poison[4];
	uint8_t caller[2][FI_CALLSITE_SIZE];	/* [jmp]: the new call site */
	size_t caller_len;			/* its bytes that replace the site's */
	int caller_hash;			/* offset of the hash in it */
	bool caller_neg;			/* kCFI form: it holds -hash */
};

static int fi_forms_caller(const struct fi_pass *ps, struct fi_forms *fm, bool jmp)
{
	const struct fi_seq *ind = fi_set_forms(ps->set)->kcfi_indirect[jmp];
	uint8_t *w = fm->caller[jmp];
	struct fi_buf b;

	fi_buf_init_set(&b, w, FI_CALLSITE_SIZE, 0, ps->set);
	if (ps->paranoid) {
		fi_emit_paranoid_caller(&b, 0, jmp);
		fm->caller_hash = fi_seq_paranoid_call.hash;
		return b.err;
	}
	if (ps->fineibt) {
		fi_emit_fineibt_caller(&b, 0, jmp);
		fm->caller_hash = fi_seq_fineibt_caller.hash;
		return b.err;
	}
	/* kcfi, off: the compiler's check, maybe jumped over, new -hash */
	fi_emit_kcfi_caller(&b, 0, jmp, FI_CALLSITE_SIZE);
	if (ps->o->cfg.mode == FINEIBT_MODE_OFF) {
		fi_buf_init(&b, w, fi_seq_caller_off.len, 0);
		fi_emit_seq(&b, &fi_seq_caller_off, 0);
	}
	fi_buf_init_set(&b, w + FI_KCFI_CALLER_CALL, ind->len,
			FI_KCFI_CALLER_CALL, ps->set);
	fi_emit_seq(&b, ind, 0);
	fm->caller_hash = fi_seq_kcfi_caller.hash;
	fm->caller_neg = true;
	return b.err;
}

static int fi_forms_init(const struct fi_pass *ps, struct fi_forms *fm)
{
	const size_t bhi_at = FI_FINEIBT_PREAMBLE_BHI;
	struct fi_buf b;
	int err;

	memset(fm, 0, sizeof(*fm));
	fi_buf_init_set(&b, fm->pre, sizeof(fm->pre), 0, ps->set);
	fi_emit_fineibt_preamble(&b, 0);
	if (!b.err && fi_set_forms(ps->set)->arity1) {
		fi_buf_init_set(&b, fm->inline1, sizeof(fm->inline1), bhi_at,
				ps->set);
		fi_emit_bhi_tail(&b, 1, false, 0);
	}
	if (!b.err) {
		fi_buf_init_set(&b, fm->poison, sizeof(fm->poison), 0, ps->set);
		fi_emit_poison(&b);
	}
	if (b.err)
		return b.err;
	/* Without de-thunking only the check part (bytes 0..13) is replaced. */
	fm->caller_len = ps->paranoid || ps->o->dethunk ? FI_CALLSITE_SIZE
							: FI_KCFI_CALLER_CALL;
	err = fi_forms_caller(ps, fm, false);
	return err ? err : fi_forms_caller(ps, fm, true);
}

/* ------------------------------------------------------------ preambles */

/* Does this (kCFI, ENDBR) preamble need a call into the BHI stubs? */
static bool fi_needs_stub(const struct fi_pass *ps, int arity)
{
	return ps->bhi && arity >= 1 && !(arity == 1 && ps->inline1);
}

/*
 * The FineIBT form of the preamble window @w (at run-time @ip): preamble,
 * BHI tail, and func+0 poisoned when it is an exact endbr64 and not
 * already overwritten by the arity-1 inline form.
 */
static int fi_build_fineibt(struct fi_pass *ps, const struct fi_forms *fm,
			    uint8_t *w, uint64_t ip, uint32_t hash, int arity)
{
	const size_t bhi_at = FI_FINEIBT_PREAMBLE_BHI;
	/* v6.18's preamble traps on the poison's UDB: it is always there. */
	bool poison = fi_exact_endbr(w + FI_PREAMBLE_SIZE) || ps->poison_all;
	/* func+0 is code, not an ENDBR (a stock module's function without
	 * -fcf-protection): nothing may be written over it */
	bool code = !fi_is_endbr(w + FI_PREAMBLE_SIZE);
	struct fi_buf b;

	if (code && ps->poison_all)
		return -ENOTSUP;
	memcpy(w, fm->pre, FI_PREAMBLE_SIZE);
	fi_store32(w + FI_FINEIBT_PREAMBLE_HASH, hash);
	if (code && ps->bhi && arity == 1 && ps->inline1) {
		/* the stub call instead of the inline form, which runs into func+0 */
		fi_buf_init_set(&b, w + bhi_at, FI_PREAMBLE_SIZE - bhi_at,
				ip + bhi_at, ps->set);
		fi_emit_bhi_tail(&b, 1, true, ps->o->bhi_args);	/* true: the call */
		if (b.err)
			return b.err;
		ps->st->bhi++;
	} else if (fi_needs_stub(ps, arity)) {
		fi_buf_init_set(&b, w + bhi_at, FI_PRE_WINDOW - bhi_at,
				ip + bhi_at, ps->set);
		fi_emit_bhi_tail(&b, arity, ps->warn, ps->o->bhi_args);
		if (b.err)
			return b.err;
		ps->st->bhi++;
	} else if (ps->bhi && arity == 1) {
		memcpy(w + bhi_at, fm->inline1, sizeof(fm->inline1));
		ps->st->bhi_inline++;
		poison = false;		/* func+0 is the BHI magic now */
	}
	if (poison) {
		memcpy(w + FI_PREAMBLE_SIZE, fm->poison, sizeof(fm->poison));
		ps->st->poisoned++;
	}
	return 0;
}

/*
 * The preamble window at @at (@p, now holding a kCFI preamble of
 * compile-time @hash0 in @want) in the pass's form.
 */
static int fi_pass_preamble_from(struct fi_pass *ps, const struct fi_forms *fm,
				 uint64_t at, uint8_t *p, uint8_t *want,
				 uint32_t hash0, int arity)
{
	/* An empty-parentheses definition gets its implied prototype (knr.c). */
	uint32_t hash = fi_pass_hash(ps, fi_knr_hash(hash0));
	bool changed;
	int err = 0;

	if (ps->fineibt && (ps->stock || fi_is_endbr(want + FI_PREAMBLE_SIZE)))
		err = fi_build_fineibt(ps, fm, want, at + ps->bias, hash, arity);
	else	/* kcfi, off, or no ENDBR: only the rehash (cfi_rand_preamble) */
		fi_store32(want + FI_KCFI_PREAMBLE_HASH, hash);
	if (err)
		return err;
	err = fi_pass_put(ps, at, p, want, FI_PRE_WINDOW, &changed);
	if (!err && changed)
		ps->st->preambles++;
	return err;
}

static int fi_pass_preamble(struct fi_pass *ps, const struct fi_forms *fm,
			    const struct fi_func *f)
{
	uint64_t at = f->addr - FI_PREAMBLE_SIZE;
	uint8_t want[FI_PRE_WINDOW];
	uint8_t *p = fi_read(ps, at, FI_PRE_WINDOW);
	struct fi_preamble_info pi;

	/* A stock preamble becomes the kCFI form first (insn.h). */
	if (p && f->stock && fi_match_stock_preamble(p, &pi.hash, &pi.arity)) {
		struct fi_buf b;

		memcpy(want, p, FI_PRE_WINDOW);
		fi_buf_init(&b, want, FI_PREAMBLE_SIZE, 0);
		fi_emit_kcfi_preamble(&b, pi.hash, pi.arity);
		if (b.err)
			return b.err;
		return fi_pass_preamble_from(ps, fm, at, p, want, pi.hash,
					     pi.arity);
	}
	/* fi_classify_preamble's FI_PRE_KCFI, without the rest of the decode */
	if (!p || !fi_match_kcfi_preamble(p, &pi.hash, &pi.arity)) {
		/* A patchable slot that never held a hash is no CFI function. */
		if (f->form != FI_PRE_NONE)
			fi_pass_skip(ps, f->addr, "preamble", "the kCFI pattern");
		return 0;
	}
	memcpy(want, p, FI_PRE_WINDOW);
	return fi_pass_preamble_from(ps, fm, at, p, want, pi.hash, pi.arity);
}

/* -------------------------------------------------------------- callers */

static int fi_pass_caller(struct fi_pass *ps, const struct fi_forms *fm,
			  const struct fi_call *c)
{
	uint8_t want[FI_CALLSITE_SIZE];
	uint8_t *p = fi_read(ps, c->addr, FI_CALLSITE_SIZE);
	uint64_t r11 = ps->im->thunks[FI_R11];
	struct fi_caller_info ci;
	enum fi_caller_form form;
	uint32_t hash;
	bool changed, dethunk;
	int err;

	form = p ? fi_match_kcfi_caller(p, c->addr, &ci) : FI_CALL_NONE;
	/* The check loads through r11: the call must go through r11 too. */
	if ((form != FI_CALL_KCFI && form != FI_CALL_OFF) ||
	    (r11 && ci.thunk != r11)) {
		fi_pass_skip(ps, c->addr, "call site", "the kCFI pattern");
		return 0;
	}
	/* constant-size copies: this loop is the hot one */
	memcpy(want, fm->caller[ci.jmp], FI_KCFI_CALLER_CALL);
	if (fm->caller_len == FI_CALLSITE_SIZE)
		memcpy(want + FI_KCFI_CALLER_CALL, fm->caller[ci.jmp] + FI_KCFI_CALLER_CALL,
		       FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL);
	else
		memcpy(want + FI_KCFI_CALLER_CALL, p + FI_KCFI_CALLER_CALL,
		       FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL);
	hash = fi_pass_hash(ps, ci.hash);
	fi_store32(want + fm->caller_hash, fm->caller_neg ? -hash : hash);
	dethunk = memcmp(p + FI_KCFI_CALLER_CALL, want + FI_KCFI_CALLER_CALL,
			 FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL);
	err = fi_pass_put(ps, c->addr, p, want, FI_CALLSITE_SIZE, &changed);
	if (err || !changed)
		return err;
	ps->st->callers++;
	ps->st->dethunked += dethunk;
	return 0;
}

/* ---------------------------------------------------- stock call sites */

/*
 * A stock kCFI call site keeps its shape (it has no room for a FineIBT or
 * paranoid caller and calls through its own register): its hash is
 * rehashed and its load follows where the pass puts the preamble hash
 * (-15 in kCFI form, -9 in every FineIBT form); cfi=off jumps over its
 * check (docs/compat.md, "Stock kCFI modules").
 */
static int fi_pass_scall(struct fi_pass *ps, const struct fi_scall *c)
{
	uint8_t want[FI_STOCK_SITE_MAX];
	uint8_t *p = fi_read(ps, c->addr, c->s.len);
	struct fi_stock_site s;
	bool changed;
	int err;

	if (!p || c->s.len > sizeof(want) ||
	    !fi_match_stock_site(p + c->s.ud, c->s.ud, c->s.len - c->s.ud, &s) ||
	    s.len != c->s.len || s.ud != c->s.ud) {
		fi_pass_skip(ps, c->addr, "call site", "the stock kCFI pattern");
		return 0;
	}
	memcpy(want, p, s.len);
	err = fi_stock_site_write(want, &s, fi_pass_hash(ps, s.hash),
				  ps->fineibt ? FI_STOCK_LOAD_FINEIBT :
					        FI_STOCK_LOAD_KCFI,
				  ps->o->cfg.mode == FINEIBT_MODE_OFF);
	if (!err)
		err = fi_pass_put(ps, c->addr, p, want, s.len, &changed);
	if (!err && changed)
		ps->st->callers++;
	return err;
}

/* ------------------------------------------------------------ fast lanes */

/*
 * The two hot loops of fi_patch_image (a verification interleaves sites
 * and keeps fi_pass_preamble/fi_pass_caller). Every site is first tested
 * against the one form it nearly always has, with the pass's invariants in
 * locals (a byte written through the window may alias anything behind a
 * pointer, so the compiler reloads them otherwise) and no call; any site
 * that is not exactly in that form goes to fi_pass_preamble or
 * fi_pass_caller as before, which test and warn as they always did.
 *
 * A call site is in the lane when its 20 bytes are exactly the compiler's
 * form that discovery recorded for it (struct fi_call: kCFI or off, set,
 * call or jmp, hash) with its cs call reaching the r11 thunk: the set's
 * template rebuilt, compared whole. Those bytes are a subset of what
 * fi_match_kcfi_caller accepts, with the same jmp and hash, so the new
 * bytes are the same as the slow path's. A preamble is in the lane when
 * fi_match_kcfi_preamble's test (opcode range, bytes 5..15) holds, made
 * on two words.
 */
struct fi_lane {
	/* call sites: [off][set][jmp], bytes 0..7 (hash zeroed) and 8..15 */
	uint64_t lo[2][FI_NSETS][2], hi[2][FI_NSETS][2];
	bool calls;			/* the templates fit the lane's layout */
	/*
	 * The FineIBT preamble without BHI as words (fi_build_fineibt's
	 * bytes when no BHI tail is written): bytes 0..7 and 8..15 with the
	 * hash (7..10) zeroed, the poison; pre_words false: another layout.
	 */
	bool pre_words;
	uint64_t fine_lo, fine_hi;
	uint32_t poison;
	/* kCFI preamble: the nops of bytes 8..15 and 5..7 (as bits 40..63) */
	uint64_t pre_hi, pre_lo_top;
	uint8_t pre_op;
	/* hash memo of preambles: compile-time hash -> rehash(knr(hash)) */
	struct fi_memo knr;
};

static void fi_lane_init(struct fi_lane *ln, const struct fi_forms *fm)
{
	const struct fi_seq *off = &fi_seq_caller_off;
	const struct fi_seq *pre = &fi_seq_kcfi_preamble;
	uint8_t b[FI_CALLSITE_SIZE];

	ln->calls = off->len <= FI_KCFI_CALLER_HASH;
	for (int set = 0; set < FI_NSETS; set++) {
		for (int jmp = 0; jmp < 2; jmp++) {
			const struct fi_seq *t = fi_set_forms(set)->kcfi_caller[jmp];

			if (t->len != FI_CALLSITE_SIZE || t->hash != FI_KCFI_CALLER_HASH) {
				ln->calls = false;
				continue;
			}
			memcpy(b, t->bytes, FI_CALLSITE_SIZE);
			memset(b + FI_KCFI_CALLER_HASH, 0, 4);
			ln->lo[0][set][jmp] = fi_load64(b);
			ln->hi[0][set][jmp] = fi_load64(b + 8);
			memcpy(b, off->bytes, off->len <= FI_KCFI_CALLER_HASH ?
			       off->len : 0);
			ln->lo[1][set][jmp] = fi_load64(b);
			ln->hi[1][set][jmp] = fi_load64(b + 8);
		}
	}
	ln->pre_words = FI_FINEIBT_PREAMBLE_HASH == 7 && FI_PREAMBLE_SIZE == 16;
	memcpy(b, fm->pre, FI_PREAMBLE_SIZE);
	memset(b + FI_FINEIBT_PREAMBLE_HASH, 0, 4);
	ln->fine_lo = fi_load64(b);
	ln->fine_hi = fi_load64(b + 8);
	ln->poison = fi_load32(fm->poison);
	ln->pre_op = pre->bytes[0];
	ln->pre_hi = fi_load64(pre->bytes + 8);
	ln->pre_lo_top = fi_load64(pre->bytes) >> 40;
	memset(ln->knr.ok, 0, sizeof(ln->knr.ok));
}

/* @hash through @m: @f (of @ps and @hash) computed once per value. */
static inline __attribute__((always_inline))
uint32_t fi_memo_get(struct fi_memo *m, struct fi_pass *ps, uint32_t hash,
		     uint32_t (*f)(struct fi_pass *, uint32_t))
{
	uint32_t i = (hash * 0x9e3779b1u) >> (32 - FI_MEMO_BITS);

	if (!m->ok[i] || m->key[i] != hash) {
		m->key[i] = hash;
		m->val[i] = f(ps, hash);
		m->ok[i] = 1;
	}
	return m->val[i];
}

static uint32_t fi_knr_rehash(struct fi_pass *ps, uint32_t hash)
{
	return fi_types_rehash(ps, fi_knr_hash(hash));
}

static uint32_t fi_knr_only(struct fi_pass *ps, uint32_t hash)
{
	return fi_knr_hash(hash);
}

/* The window of fi_read, in locals: @p for [@addr, @addr + @len), or NULL. */
static inline __attribute__((always_inline))
uint8_t *fi_lane_read(struct fi_pass *ps, struct fi_window *w, uint64_t addr,
		      size_t len)
{
	uint8_t *p;

	if (addr >= w->lo && addr <= w->hi && len <= w->hi - addr)
		return w->mem + (addr - w->lo);
	p = fi_read(ps, addr, len);
	*w = ps->win;
	return p;
}

static int fi_lane_preambles(struct fi_pass *ps, const struct fi_forms *fm,
			     struct fi_lane *ln)
{
	struct fi_image *im = ps->im;
	const struct fi_func *funcs = im->funcs;
	const size_t n = im->nfuncs;
	const bool rand = ps->o->cfg.flags & FINEIBT_F_RAND, fineibt = ps->fineibt;
	const uint64_t pre_hi = ln->pre_hi, pre_top = ln->pre_lo_top;
	const uint8_t op = ln->pre_op;
	const bool words = fineibt && !ps->bhi && ln->pre_words;
	struct fi_window w = ps->win;
	size_t written = 0, poisoned = 0;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		uint64_t at = funcs[i].addr - FI_PREAMBLE_SIZE;
		uint8_t *p = fi_lane_read(ps, &w, at, FI_PRE_WINDOW);
		uint8_t want[FI_PRE_WINDOW];
		uint32_t hash;
		int arity;

		if (!p || ps->stock || (uint8_t)(p[0] - op) > FI_MAX_ARITY ||
		    fi_load64(p + 8) != pre_hi || fi_load64(p) >> 40 != pre_top) {
			err = fi_pass_preamble(ps, fm, &funcs[i]);
			w = ps->win;
			continue;
		}
		arity = p[0] - op;
		hash = fi_memo_get(&ln->knr, ps, fi_load32(p + FI_KCFI_PREAMBLE_HASH),
				   rand ? fi_knr_rehash : fi_knr_only);
		if (words && fi_is_endbr(p + FI_PREAMBLE_SIZE)) {
			/* fi_build_fineibt without BHI, on words */
			uint64_t lo = ln->fine_lo | (uint64_t)hash << 56;
			uint64_t hi = ln->fine_hi | hash >> 8;
			uint32_t f0 = fi_load32(p + FI_PREAMBLE_SIZE);
			bool poison = f0 == FI_ENDBR64_VAL || ps->poison_all;

			poisoned += poison;
			if (poison)
				f0 = ln->poison;
			if (lo == fi_load64(p) && hi == fi_load64(p + 8) &&
			    f0 == fi_load32(p + FI_PREAMBLE_SIZE))
				continue;
			fi_store64(p, lo);
			fi_store64(p + 8, hi);
			fi_store32(p + FI_PREAMBLE_SIZE, f0);
			written++;
			continue;
		}
		memcpy(want, p, FI_PRE_WINDOW);
		if (fineibt && fi_is_endbr(p + FI_PREAMBLE_SIZE))
			err = fi_build_fineibt(ps, fm, want, at + ps->bias, hash,
					       arity);
		else
			fi_store32(want + FI_KCFI_PREAMBLE_HASH, hash);
		if (err || fi_same(p, want, FI_PRE_WINDOW))
			continue;
		memcpy(p, want, FI_PRE_WINDOW);
		written++;
	}
	im->bytes_written += written * FI_PRE_WINDOW;
	im->writes += written;
	ps->st->preambles += written;
	ps->st->poisoned += poisoned;
	return err;
}

static int fi_lane_callers(struct fi_pass *ps, const struct fi_forms *fm,
			   struct fi_lane *ln)
{
	struct fi_image *im = ps->im;
	const struct fi_call *calls = im->calls;
	const size_t n = im->ncalls;
	const uint64_t r11 = im->thunks[FI_R11];
	const bool rand = ps->o->cfg.flags & FINEIBT_F_RAND;
	const bool whole = fm->caller_len == FI_CALLSITE_SIZE;
	const bool neg = fm->caller_neg;
	const int hoff = fm->caller_hash;
	struct fi_window w = ps->win;
	size_t written = 0, dethunked = 0;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		const struct fi_call *c = &calls[i];
		const unsigned int off = c->form == FI_CALL_OFF, set = c->set;
		const unsigned int jmp = c->jmp;
		uint8_t want[FI_CALLSITE_SIZE];
		uint8_t *p = NULL;
		uint32_t hash;
		bool dethunk;

		if (ln->calls && r11 && (off || c->form == FI_CALL_KCFI) &&
		    set < FI_NSETS)
			p = fi_lane_read(ps, &w, c->addr, FI_CALLSITE_SIZE);
		if (!p || fi_load64(p) != (ln->lo[off][set][jmp] |
					   (uint64_t)(uint32_t)-c->hash << 16) ||
		    fi_load64(p + 8) != ln->hi[off][set][jmp] ||
		    c->addr + FI_CALLSITE_SIZE +
		    (uint64_t)(int64_t)(int32_t)fi_load32(p + 16) != r11) {
			err = fi_pass_caller(ps, fm, c);
			w = ps->win;
			continue;
		}
		if (whole) {
			memcpy(want, fm->caller[jmp], FI_CALLSITE_SIZE);
		} else {
			memcpy(want, fm->caller[jmp], FI_KCFI_CALLER_CALL);
			memcpy(want + FI_KCFI_CALLER_CALL, p + FI_KCFI_CALLER_CALL,
			       FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL);
		}
		hash = rand ? fi_memo_get(ps->memo, ps, c->hash, fi_types_rehash) :
			      c->hash;
		fi_store32(want + hoff, neg ? -hash : hash);
		dethunk = memcmp(p + FI_KCFI_CALLER_CALL, want + FI_KCFI_CALLER_CALL,
				 FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL);
		if (fi_same(p, want, FI_CALLSITE_SIZE))
			continue;
		memcpy(p, want, FI_CALLSITE_SIZE);
		written++;
		dethunked += dethunk;
	}
	im->bytes_written += written * FI_CALLSITE_SIZE;
	im->writes += written;
	ps->st->callers += written;
	ps->st->dethunked += dethunked;
	return err;
}

/* ------------------------------------------------- unchecked thunk calls */

/* Is @addr the thunk call at the end of a kCFI site (handled above)? */
static bool fi_in_call_site(const struct fi_image *im, uint64_t addr)
{
	uint64_t start = addr - FI_KCFI_CALLER_CALL;
	size_t lo = 0, hi = im->ncalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->calls[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < im->ncalls && im->calls[lo].addr == start;
}

static int fi_thunk_reg(const struct fi_image *im, const struct fi_tcall *tc)
{
	if (tc->reg >= 0 && tc->reg < 16)
		return tc->reg;
	for (int r = 0; r < 16; r++) {
		if (im->thunks[r] && im->thunks[r] == tc->thunk)
			return r;
	}
	return -1;
}

static int fi_pass_tcall(struct fi_pass *ps, const struct fi_tcall *tc)
{
	const size_t n = fi_seq_thunk_call.len;
	uint8_t *p = fi_read(ps, tc->addr, n);
	uint8_t want[8];
	struct fi_buf b;
	bool jmp, changed;
	int reg, err;

	if (fi_in_call_site(ps->im, tc->addr))
		return 0;
	reg = fi_thunk_reg(ps->im, tc);
	if (reg < 0)
		return 0;		/* nothing known to call instead */
	if (!p || !fi_match_thunk_call(p, tc->addr, tc->thunk, &jmp)) {
		fi_pass_skip(ps, tc->addr, "thunk call",
			     "a cs call/jmp to its thunk");
		return 0;
	}
	fi_buf_init_set(&b, want, n, tc->addr + ps->bias, ps->set);
	fi_emit_indirect(&b, reg, jmp, n);
	if (b.err)
		return b.err;
	err = fi_pass_put(ps, tc->addr, p, want, n, &changed);
	if (!err && changed)
		ps->st->dethunked++;
	return err;
}

/* --------------------------------------------------------------- checks */

static int fi_check_opts(const struct fi_image *im, const struct fi_patch_opts *o)
{
	const struct fineibt_config *c = &o->cfg;

	if (c->mode == FINEIBT_MODE_AUTO || c->mode > FINEIBT_MODE_FINEIBT) {
		fi_warn("%s: cfi mode not resolved (auto or unknown)\n",
			fi_pass_path(im));
		return -EINVAL;
	}
	if ((c->flags & (FINEIBT_F_PARANOID | FINEIBT_F_BHI)) &&
	    c->mode != FINEIBT_MODE_FINEIBT) {
		fi_warn("%s: paranoid and bhi need cfi=fineibt\n",
			fi_pass_path(im));
		return -EINVAL;
	}
	return 0;
}

/* The BHI call in the preamble of @func can reach its stub. */
static int fi_check_stub(const struct fi_pass *ps, uint64_t func, int arity)
{
	uint64_t ip = func - FI_PREAMBLE_SIZE + FI_FINEIBT_PREAMBLE_BHI + ps->bias;
	uint64_t end = ip + fi_seq_bhi_call.len;
	uint64_t target = ps->o->bhi_args + (uint64_t)arity * FI_BHI_SLOT_SIZE;
	int64_t d = (int64_t)(target - end);
	char where[256];

	if (ps->o->bhi_args && d >= INT32_MIN && d <= INT32_MAX)
		return 0;
	fi_image_symbolize(ps->im, func, where, sizeof(where));
	if (!ps->o->bhi_args)
		fi_warn("%s: cfi=bhi: %s has arity %d but no BHI stub array "
			"(__bhi_args) was given; link with libfineibt or drop bhi\n",
			fi_pass_path(ps->im), where, arity);
	else
		fi_warn("%s: cfi=bhi: __bhi_args at %#llx is out of rel32 reach "
			"of %s; drop bhi\n", fi_pass_path(ps->im),
			(unsigned long long)ps->o->bhi_args, where);
	return -EINVAL;
}

static bool fi_pre_rewritten(enum fi_preamble_form f)
{
	return f == FI_PRE_FINEIBT || f == FI_PRE_FINEIBT_BHI ||
	       f == FI_PRE_FINEIBT_ARITY1;
}

static bool fi_call_rewritten(enum fi_caller_form f)
{
	return f == FI_CALL_FINEIBT || f == FI_CALL_FINEIBT_THUNK ||
	       f == FI_CALL_PARANOID;
}

/*
 * Compiler output has the addl at +6 of a call site (every rewritten form
 * has a lea or a cmpl there) and a movl at a preamble (a FineIBT preamble
 * starts with its ENDBR): anything else gets the full classification.
 */
static bool fi_caller_maybe_rewritten(const uint8_t *p)
{
	const int addl = FI_KCFI_CALLER_HASH + 4;	/* right after the imm32 */

	return fi_load32(p + addl) != fi_load32(fi_seq_kcfi_caller.bytes + addl);
}

static bool fi_preamble_maybe_rewritten(const uint8_t *p)
{
	uint8_t op = fi_seq_kcfi_preamble.bytes[0];

	return p[0] < op || p[0] > op + FI_MAX_ARITY;
}

/*
 * Everything that can refuse the whole image, before a byte is written:
 * a note or a site in rewritten form (-EALREADY), a BHI call that cannot
 * be made (-EINVAL).
 */
static int fi_check_image(struct fi_pass *ps)
{
	const struct fi_image *im = ps->im;
	struct fi_window w = ps->win;	/* fi_read's, in locals */
	struct fi_preamble_info pi;
	int err;

	if (im->note.present)
		return -EALREADY;
	for (size_t i = 0; i < im->ncalls; i++) {
		const uint8_t *p = fi_lane_read(ps, &w, im->calls[i].addr,
						FI_CALLSITE_SIZE);

		if (p && fi_caller_maybe_rewritten(p) &&
		    fi_call_rewritten(fi_classify_caller(p, im->calls[i].addr, NULL)))
			return -EALREADY;
	}
	for (size_t i = 0; i < im->nfuncs; i++) {
		uint64_t func = im->funcs[i].addr;
		const uint8_t *p = fi_lane_read(ps, &w, func - FI_PREAMBLE_SIZE,
						FI_PRE_WINDOW);

		if (!p)
			continue;
		if (fi_preamble_maybe_rewritten(p)) {
			fi_classify_preamble(p, func - FI_PREAMBLE_SIZE + ps->bias, &pi);
			if (fi_pre_rewritten(pi.form))
				return -EALREADY;
			continue;
		}
		if (!ps->bhi || !fi_is_endbr(p + FI_PREAMBLE_SIZE) ||
		    !fi_match_kcfi_preamble(p, NULL, &pi.arity) ||
		    !fi_needs_stub(ps, pi.arity))
			continue;
		err = fi_check_stub(ps, func, pi.arity);
		if (err)
			return err;
	}
	return 0;
}

/* ----------------------------------------------------------------- entry */

int fi_patch_image(struct fi_image *im, const struct fi_patch_opts *o,
		   struct fi_patch_stats *st)
{
	struct fi_patch_stats local;
	struct fi_pass ps = fi_pass_init(im, o, st ? st : &local, NULL);
	struct fi_forms fm;
	struct fi_memo memo;
	struct fi_lane lane;
	int err;

	memset(ps.st, 0, sizeof(*ps.st));
	memset(memo.ok, 0, sizeof(memo.ok));
	ps.memo = &memo;
	err = fi_check_opts(im, o);
	if (!err)
		err = fi_check_image(&ps);
	if (!err)
		err = fi_forms_init(&ps, &fm);
	if (!err) {
		fi_lane_init(&lane, &fm);
		err = fi_lane_preambles(&ps, &fm, &lane);
	}
	if (!err)
		err = fi_lane_callers(&ps, &fm, &lane);
	for (size_t i = 0; !err && i < im->nscalls; i++)
		err = fi_pass_scall(&ps, &im->scalls[i]);
	for (size_t i = 0; !err && o->dethunk && !o->coarse && i < im->ntcalls; i++)
		err = fi_pass_tcall(&ps, &im->tcalls[i]);
	fi_types_free(&ps.types);
	return err;
}

bool fi_patch_coarse(const struct fi_image *im, const struct fineibt_config *cfg)
{
	return cfg->mode != FINEIBT_MODE_OFF && fi_image_coarse_thunks(im);
}

bool fi_patch_keeps(const struct fi_image *im, const struct fi_patch_opts *o)
{
	/* The walks over every function last: a module whose checked sites
	 * call through checking thunks is rewritten whatever they find (the
	 * K&R scan was 0.7M instructions of 8,000 functions' start-up). */
	return o->cfg.mode == FINEIBT_MODE_KCFI &&
	       !(o->cfg.flags & FINEIBT_F_RAND) && !(o->coarse && im->ncalls) &&
	       !fi_image_stock(im) && !fi_image_has_knr(im);
}

/* ---------------------------------------------------------------- verify */

static bool fi_sorted_funcs(const struct fi_image *im)
{
	for (size_t i = 1; i < im->nfuncs; i++) {
		if (im->funcs[i].addr < im->funcs[i - 1].addr)
			return false;
	}
	return true;
}

static bool fi_sorted_calls(const struct fi_image *im)
{
	for (size_t i = 1; i < im->ncalls; i++) {
		if (im->calls[i].addr < im->calls[i - 1].addr)
			return false;
	}
	for (size_t i = 1; i < im->ntcalls; i++) {
		if (im->tcalls[i].addr < im->tcalls[i - 1].addr)
			return false;
	}
	for (size_t i = 1; i < im->nscalls; i++) {
		if (im->scalls[i].addr < im->scalls[i - 1].addr)
			return false;
	}
	return true;
}

/*
 * The same passes as fi_patch_image, reading the original text, with
 * every site handed to @ck in ascending address order (preambles by their
 * func-16, call sites, thunk calls merged), so the checker can compare
 * the gaps between them with the original as it goes.
 *
 * fi_check_image is not run again: it only decides whether the whole
 * image is refused, which fi_patch_image already did over the same
 * original bytes. Whatever it would refuse here gets no site bytes from
 * the passes either (a site not in kCFI form is skipped), so the checker
 * then demands the original bytes there: the verdict cannot be weaker.
 */
int fi_patch_verify(struct fi_image *im, const struct fi_patch_opts *o,
		    const struct fi_patch_copy *copies, size_t ncopies)
{
	struct fi_patch_opts q = *o;
	struct fi_patch_stats st;
	struct fi_check ck = { .cp = copies, .n = ncopies };
	struct fi_pass ps = fi_pass_init(im, &q, &st, &ck);
	size_t f = 0, c = 0, t = 0, sc = 0;
	struct fi_forms fm;
	struct fi_memo memo;
	int err;

	q.quiet = true;
	memset(&st, 0, sizeof(st));
	memset(memo.ok, 0, sizeof(memo.ok));
	ps.memo = &memo;
	if (!im->live || ncopies > FI_MAX_COPIES)
		return -EINVAL;
	for (size_t i = 0; i < ncopies; i++)
		ck.cur[i] = copies[i].lo;
	if (!fi_sorted_funcs(im) || !fi_sorted_calls(im))
		return -EBADMSG;
	err = fi_check_opts(im, &q);
	if (!err)
		err = fi_forms_init(&ps, &fm);
	while (!err) {
		uint64_t af = f < im->nfuncs ? im->funcs[f].addr - FI_PREAMBLE_SIZE :
			      UINT64_MAX;
		uint64_t ac = c < im->ncalls ? im->calls[c].addr : UINT64_MAX;
		uint64_t at = q.dethunk && !q.coarse && t < im->ntcalls ?
			      im->tcalls[t].addr : UINT64_MAX;
		uint64_t as = sc < im->nscalls ? im->scalls[sc].addr : UINT64_MAX;

		if (af == UINT64_MAX && ac == UINT64_MAX && at == UINT64_MAX &&
		    as == UINT64_MAX)
			break;
		if (as < af && as < ac && as < at)
			err = fi_pass_scall(&ps, &im->scalls[sc++]);
		else if (af <= ac && af <= at)
			err = fi_pass_preamble(&ps, &fm, &im->funcs[f++]);
		else if (ac <= at)
			err = fi_pass_caller(&ps, &fm, &im->calls[c++]);
		else
			err = fi_pass_tcall(&ps, &im->tcalls[t++]);
	}
	/* and each copy's bytes after its last site */
	for (size_t i = 0; !err && i < ncopies; i++) {
		uint64_t end = copies[i].lo + copies[i].len, cur = ck.cur[i];

		if (end > cur && memcmp(copies[i].copy + (cur - copies[i].lo),
					(const void *)(uintptr_t)cur, end - cur))
			err = -EBADMSG;
	}
	fi_types_free(&ps.types);
	return err;
}
