// SPDX-License-Identifier: MIT
/*
 * Old-style C definitions (docs/compat.md, "Old-style definitions").
 *
 * clang-22 gives a definition with empty parentheses, `void f() { }`,
 * the kCFI type of an unprototyped function (`_ZTSFvE`), while C says
 * such a definition has no parameters: every caller that declared it
 * properly calls through `void (*)(void)` and checks `_ZTSFvvE`. (A K&R
 * definition with parameters, `int f(a) int a; {...}`, already gets the
 * hash of its promoted prototype `_ZTSFiiE`; calls through an
 * unprototyped pointer `T (*)()` carry no check at all.)
 *
 * No prototyped function has a type name of the form `_ZTSF<R>E`, so a
 * preamble holding the hash of one is exactly an empty-parentheses
 * definition returning R. The passes give it the hash of `_ZTSF<R>vE`,
 * the prototype its definition implies, before any rehash: callers of
 * `R (*)(void)` are accepted, any other arity or return type still traps.
 *
 * R cannot be read back from a hash, so the return types are the ones
 * listed below: every builtin type, and data pointers in the forms the
 * driver's -fsanitize-cfi-icall-generalize-pointers produces (`void *`
 * with its qualifiers) and the common exact ones. A definition returning
 * a struct, union or enum by value keeps its hash (and traps as before).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patch.h"

/* clang-22's kCFI type id: the low 32 bits of xxHash64(name, seed 0). */
#define FI_P1	0x9e3779b185ebca87ULL
#define FI_P2	0xc2b2ae3d27d4eb4fULL
#define FI_P3	0x165667b19e3779f9ULL
#define FI_P4	0x85ebca77c2b2ae63ULL
#define FI_P5	0x27d4eb2f165667c5ULL

static uint64_t fi_rotl(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

static uint64_t fi_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t fi_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t fi_xxh_round(uint64_t acc, uint64_t in)
{
	return fi_rotl(acc + in * FI_P2, 31) * FI_P1;
}

static uint64_t fi_xxh_merge(uint64_t h, uint64_t v)
{
	return (h ^ fi_xxh_round(0, v)) * FI_P1 + FI_P4;
}

uint64_t fi_xxhash64(const void *data, size_t len)
{
	const uint8_t *p = data, *end = p + len;
	uint64_t h;

	if (len >= 32) {
		uint64_t v1 = FI_P1 + FI_P2, v2 = FI_P2, v3 = 0, v4 = -FI_P1;

		for (; end - p >= 32; p += 32) {
			v1 = fi_xxh_round(v1, fi_rd64(p));
			v2 = fi_xxh_round(v2, fi_rd64(p + 8));
			v3 = fi_xxh_round(v3, fi_rd64(p + 16));
			v4 = fi_xxh_round(v4, fi_rd64(p + 24));
		}
		h = fi_rotl(v1, 1) + fi_rotl(v2, 7) + fi_rotl(v3, 12) +
		    fi_rotl(v4, 18);
		h = fi_xxh_merge(h, v1);
		h = fi_xxh_merge(h, v2);
		h = fi_xxh_merge(h, v3);
		h = fi_xxh_merge(h, v4);
	} else {
		h = FI_P5;
	}
	h += len;
	for (; end - p >= 8; p += 8)
		h = fi_rotl(h ^ fi_xxh_round(0, fi_rd64(p)), 27) * FI_P1 + FI_P4;
	if (end - p >= 4) {
		h = fi_rotl(h ^ (fi_rd32(p) * FI_P1), 23) * FI_P2 + FI_P3;
		p += 4;
	}
	for (; p < end; p++)
		h = fi_rotl(h ^ (*p * FI_P5), 11) * FI_P1;
	h = (h ^ (h >> 33)) * FI_P2;
	h = (h ^ (h >> 29)) * FI_P3;
	return h ^ (h >> 32);
}

uint32_t fi_kcfi_type_id(const char *mangled)
{
	return (uint32_t)fi_xxhash64(mangled, strlen(mangled));
}

/*
 * Itanium manglings of the return types covered: the builtins, then
 * pointers (generalized: void with any cv; exact: the usual suspects).
 */
static const char *const fi_knr_ret[] = {
	"v", "b", "c", "a", "h", "s", "t", "i", "j", "l", "m", "x", "y",
	"n", "o", "f", "d", "e", "g", "w", "Ds", "Di", "Du", "DF16_", "Cf",
	"Cd", "Ce",
	"Pv", "PKv", "PVv", "PVKv",
	"Pc", "PKc", "Ph", "PKh", "Pa", "Pi", "PKi", "Pj", "Pl", "Pm", "Ps",
	"Pt", "Pf", "Pd", "Pw", "PKw", "PPc", "PPKc", "PKPKc", "PFvvE",
	"PFivE",
};

/* The name suffixes of the driver's modes: generalized (default), exact. */
static const char *const fi_knr_suffix[] = { ".generalized", "" };

#define FI_KNR_N	(sizeof(fi_knr_ret) / sizeof(fi_knr_ret[0]) * \
			 sizeof(fi_knr_suffix) / sizeof(fi_knr_suffix[0]))

/* Sorted by unprototyped hash: from -> to. */
static struct fi_knr_pair {
	uint32_t from, to;
} fi_knr_map[FI_KNR_N];
static pthread_once_t fi_knr_once = PTHREAD_ONCE_INIT;
/*
 * One bit per FI_KNR_BITS-bit slice of every "from" hash: almost every
 * preamble's hash is no unprototyped one, and one load says so without
 * the binary search (about 10% of other hashes share a bit).
 */
#define FI_KNR_BITS	10
static uint64_t fi_knr_filter[(1u << FI_KNR_BITS) / 64];

static unsigned int fi_knr_slot(uint32_t hash)
{
	return (hash ^ (hash >> 16)) & ((1u << FI_KNR_BITS) - 1);
}

/* "_ZTSF" @ret @mid "E" @suffix into @name (64 bytes hold every one). */
static size_t fi_knr_name(char *name, const char *ret, const char *mid,
			  const char *suffix)
{
	const char *parts[] = { "_ZTSF", ret, mid, "E", suffix };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t len = strlen(parts[i]);

		memcpy(name + n, parts[i], len);
		n += len;
	}
	return n;
}

/*
 * Runs at every start-up (the preamble pass asks): plain copies and an
 * insertion sort, since snprintf and qsort cost more than the hashing.
 */
static void fi_knr_init(void)
{
	size_t n = 0;
	char name[64];

	for (size_t s = 0; s < sizeof(fi_knr_suffix) / sizeof(*fi_knr_suffix); s++) {
		for (size_t r = 0; r < sizeof(fi_knr_ret) / sizeof(*fi_knr_ret); r++) {
			struct fi_knr_pair p;
			size_t k;

			p.from = (uint32_t)fi_xxhash64(name, fi_knr_name(name,
					fi_knr_ret[r], "", fi_knr_suffix[s]));
			p.to = (uint32_t)fi_xxhash64(name, fi_knr_name(name,
					fi_knr_ret[r], "v", fi_knr_suffix[s]));
			for (k = n; k > 0 && fi_knr_map[k - 1].from > p.from; k--)
				fi_knr_map[k] = fi_knr_map[k - 1];
			fi_knr_map[k] = p;
			fi_knr_filter[fi_knr_slot(p.from) / 64] |=
				1ull << (fi_knr_slot(p.from) % 64);
			n++;
		}
	}
}

uint32_t fi_knr_hash(uint32_t hash)
{
	size_t lo = 0, hi = FI_KNR_N;

	/* Asked once per preamble at start-up: no bsearch callback. */
	pthread_once(&fi_knr_once, fi_knr_init);
	if (!(fi_knr_filter[fi_knr_slot(hash) / 64] &
	      (1ull << (fi_knr_slot(hash) % 64))))
		return hash;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (fi_knr_map[mid].from == hash)
			return fi_knr_map[mid].to;
		if (fi_knr_map[mid].from < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return hash;
}

bool fi_image_has_knr(const struct fi_image *im)
{
	for (size_t i = 0; i < im->nfuncs; i++) {
		const struct fi_func *f = &im->funcs[i];
		uint64_t at = f->addr - FI_PREAMBLE_SIZE;
		const uint8_t *p;
		struct fi_preamble_info pi;

		if (f->form != FI_PRE_KCFI)
			continue;
		p = fi_image_text(im, at, FI_PREAMBLE_SIZE + 4);
		if (p && fi_classify_preamble(p, at + im->bias, &pi) ==
			 FI_PRE_KCFI && fi_knr_hash(pi.hash) != pi.hash)
			return true;
	}
	return false;
}
