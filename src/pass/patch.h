/* SPDX-License-Identifier: MIT */
/*
 * The rewriting passes over one image (the kernel's __apply_fineibt() and
 * friends): rehash, disable, FineIBT preambles and callers, paranoid
 * callers, BHI, de-thunking, ENDBR poisoning. Every write goes through
 * fi_image_poke() and is preceded by a check that the bytes being replaced
 * are what the pass expects; a site that does not match is skipped and
 * reported as symbol+offset through the print hook.
 */
#ifndef FI_PATCH_H
#define FI_PATCH_H

#include "image.h"

struct fi_patch_opts {
	struct fineibt_config cfg;	/* resolved: no FINEIBT_MODE_AUTO */
	struct fineibt_key key;		/* used when cfg.flags & FINEIBT_F_RAND */
	/*
	 * Address of the BHI stub array (__bhi_args) as seen from the
	 * image's text: link-time for a file, run-time for a live module.
	 * Needed only with FINEIBT_F_BHI; must be within rel32 reach.
	 */
	uint64_t bhi_args;
	bool dethunk;			/* cs call thunk -> call *%r11 (default on) */
	/*
	 * Leave the calls through thunks that carry no kCFI check to the
	 * thunks' coarse check (src/rt/coarse.h): de-thunk only the checked
	 * sites. Set in every mode but off (fi_patch_coarse).
	 */
	bool coarse;
	bool quiet;			/* don't report skipped sites */
};

struct fi_patch_stats {
	size_t preambles;		/* rewritten or rehashed */
	size_t callers;			/* rewritten, rehashed or disabled */
	size_t bhi;			/* preambles given a BHI call */
	size_t bhi_inline;		/* arity-1 inline preambles */
	size_t poisoned;		/* ENDBRs at func+0 poisoned */
	size_t dethunked;		/* thunk calls made direct */
	size_t skipped;			/* sites left alone: did not match */
};

/*
 * Apply @o to @im, which must still be in compiler (kCFI) form: an image
 * already rewritten (a .fineibt note, or any preamble or caller in a
 * FineIBT/paranoid/BHI form) is refused with -EALREADY. Returns 0 or
 * -errno (-EINVAL: bad options, e.g. bhi with a preamble that needs a stub
 * call and no @o->bhi_args, or stubs out of rel32 reach; a message says
 * which). Nothing is written unless the whole image passes those checks.
 * Sites that do not match their pattern are skipped, counted in
 * @st->skipped and reported unless @o->quiet. @st may be NULL.
 */
int fi_patch_image(struct fi_image *im, const struct fi_patch_opts *o,
		   struct fi_patch_stats *st);

/*
 * Verification of a patched copy (src/rt/rtlive.c): the passes of
 * fi_patch_image run again over live @im, whose views hold the ORIGINAL
 * text, and instead of writing, compare: each site's window in the copy
 * must hold exactly the bytes the passes produce from the original, and
 * every other byte of each copy (@ncopies of them, each covering the
 * run-time range [lo, lo + len) of the original, which must stay mapped
 * and unchanged) must equal the original. Returns 0, -EBADMSG on any
 * difference (or when the site arrays are not sorted: the order is what
 * lets the gaps be compared on the way), -EINVAL (not a live image, bad
 * options).
 */
struct fi_patch_copy {
	uint64_t lo, len;	/* run-time range of the original */
	const uint8_t *copy;	/* its copy, sealed */
};
int fi_patch_verify(struct fi_image *im, const struct fi_patch_opts *o,
		    const struct fi_patch_copy *copies, size_t ncopies);

/*
 * The hash a preamble or caller holds after patching with @o, given its
 * compile-time hash: rehashed when cfg has RAND, else unchanged.
 */
uint32_t fi_patch_hash(const struct fi_patch_opts *o, uint32_t hash);

/*
 * Whether the passes should leave @im's unchecked thunk calls to the
 * coarse check in @cfg's mode: every mode but off, when its thunks are
 * the checking ones (fi_image_coarse_thunks).
 */
bool fi_patch_coarse(const struct fi_image *im, const struct fineibt_config *cfg);
/*
 * True when @o (its cfg and coarse settled) leaves @im's text as compiled:
 * kcfi without rand, no empty-parentheses definition needing its hash
 * (knr.c), not a stock module (its layout is not ours), and no checked
 * site calling through a checking thunk. The runtime and the cache filler
 * decide with it alike.
 */
bool fi_patch_keeps(const struct fi_image *im, const struct fi_patch_opts *o);

/*
 * src/pass/knr.c. The hash a preamble of an empty-parentheses definition
 * (`R f()`, typed `_ZTSF<R>E` by clang) should carry: that of `R f(void)`.
 * Any other hash is returned unchanged. fi_image_has_knr: does @im hold
 * such a preamble (still in kCFI form)?
 */
uint32_t fi_knr_hash(uint32_t hash);
bool fi_image_has_knr(const struct fi_image *im);
/* The built-in table fi_knr_hash reads, recomputed: 0 if it matches. */
int fi_knr_table_check(void);
/* clang-22's kCFI type id of a mangled type name (xxHash64, low 32 bits). */
uint32_t fi_kcfi_type_id(const char *mangled);
uint64_t fi_xxhash64(const void *data, size_t len);

#endif /* FI_PATCH_H */
