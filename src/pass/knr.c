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

struct fi_knr_pair {
	uint32_t from, to;
};

/*
 * The table the list above gives, sorted by unprototyped hash (from ->
 * to), computed when the library was written rather than at every
 * start-up (212 hashes and a sort were a fifth of a small program's
 * start-up). fi_knr_table_check() recomputes it from the list: test_knr
 * fails if the two ever differ.
 */
static const struct fi_knr_pair fi_knr_map[FI_KNR_N] = {
	{ 0x0191b419, 0xcff5eb32 },	{ 0x03a3f73e, 0x966cbcf4 },
	{ 0x0541eed8, 0x98b59f83 },	{ 0x069230c0, 0x3127d2b5 },
	{ 0x086b021a, 0x867ea894 },	{ 0x0876ce22, 0xb6d7cdb8 },
	{ 0x0c991826, 0xcf418130 },	{ 0x0d42fc7e, 0x380dcb37 },
	{ 0x0d485075, 0x0326da4b },	{ 0x0d8f4714, 0x8cf86747 },
	{ 0x114d5216, 0x64ed9c1e },	{ 0x145d58bf, 0x5244cb66 },
	{ 0x18bd6d3e, 0x529c6ef0 },	{ 0x1ab928a9, 0xb5ddfdd8 },
	{ 0x1c291595, 0x5f8b4cd7 },	{ 0x1cf874d0, 0xbbcc0c0a },
	{ 0x1ebc2e74, 0x0415768b },	{ 0x2265a6a0, 0x8e6bcec2 },
	{ 0x2620e372, 0xd6c83ffb },	{ 0x266688e8, 0xec818128 },
	{ 0x266ada0a, 0x4735dc67 },	{ 0x267720ac, 0x836b1ed2 },
	{ 0x309ceda1, 0x32fcdf1b },	{ 0x36bbb4af, 0xdbd00d39 },
	{ 0x3bd24ace, 0x2ad2e295 },	{ 0x3d781cdb, 0x62d5439d },
	{ 0x3f0d390d, 0xaf7cba77 },	{ 0x4091c7b1, 0x4995f384 },
	{ 0x42019a3b, 0xf1132b8b },	{ 0x42028484, 0x944fd412 },
	{ 0x4265d479, 0x28044365 },	{ 0x440c3fe1, 0x47b59312 },
	{ 0x45f99e81, 0x7829bc93 },	{ 0x46ecee4a, 0xf8e90923 },
	{ 0x47152bfb, 0x4475d759 },	{ 0x497c78fd, 0x396a6d07 },
	{ 0x49851c55, 0x946040e9 },	{ 0x4a2edc59, 0x0957be0c },
	{ 0x5164f1bc, 0xda07c472 },	{ 0x520ee312, 0x15a771f5 },
	{ 0x5f2a2bae, 0x81b77a05 },	{ 0x63d9973a, 0x9b32cf31 },
	{ 0x64485092, 0xac967a84 },	{ 0x6b9e76df, 0x594647de },
	{ 0x6c9bc48c, 0x67f8f18e },	{ 0x6d6d661e, 0x9380c096 },
	{ 0x6e305432, 0xe9dbb5b6 },	{ 0x6e84eaaf, 0xd33033d5 },
	{ 0x70473179, 0xde85868f },	{ 0x70b780a8, 0x19773594 },
	{ 0x71bd2f9e, 0x27bfed6c },	{ 0x753753d7, 0xace58dad },
	{ 0x75471bfd, 0x7230bf2a },	{ 0x78daa2d4, 0x7a12a5c0 },
	{ 0x7b28594b, 0x135f6953 },	{ 0x7be3e985, 0xefda723f },
	{ 0x7df9c900, 0x42b0696f },	{ 0x7e894c00, 0x24a14025 },
	{ 0x7f37e9d0, 0x469fafed },	{ 0x8063d304, 0x77332687 },
	{ 0x80b5da32, 0xfb4e3e81 },	{ 0x838963d7, 0x81cd873a },
	{ 0x884d8a4d, 0x0c4b2404 },	{ 0x88b2e53c, 0x3b9eb421 },
	{ 0x90ebb8af, 0x6f7cccc2 },	{ 0x99067fd9, 0x9d253e13 },
	{ 0x993e738c, 0x36b1c5a6 },	{ 0x9d22b364, 0x5cc8f425 },
	{ 0x9e5239c8, 0xec1bdec0 },	{ 0x9f82ccdf, 0xa402679d },
	{ 0xa03c8d38, 0x01ccb982 },	{ 0xa0fed9e3, 0x2092ad29 },
	{ 0xade209c8, 0xeb09d05d },	{ 0xaed7d7cd, 0x7f318e9b },
	{ 0xb40de6e7, 0xbf46ba3f },	{ 0xb5b3935c, 0x72923c8f },
	{ 0xb8c35645, 0x5919ad32 },	{ 0xbcf98444, 0xa540670c },
	{ 0xbda08e01, 0xb7abdff5 },	{ 0xbef56a2e, 0x43823550 },
	{ 0xc1b5ece0, 0x844d0073 },	{ 0xc1eeb5c1, 0xc76a1005 },
	{ 0xc82e44e7, 0x036183de },	{ 0xcbdd3aa6, 0x22b0e4bf },
	{ 0xcc29e832, 0x837de525 },	{ 0xccd6784f, 0x0e301b2e },
	{ 0xccf3e441, 0x7d26c0ba },	{ 0xd5fb593d, 0x03beb5e1 },
	{ 0xd9b1cd24, 0xd1953890 },	{ 0xda3ab449, 0x7ea36b75 },
	{ 0xdbfffcea, 0x0153817f },	{ 0xdef126fd, 0x1e6b9aa0 },
	{ 0xe6f25634, 0xfb92ea1f },	{ 0xea117683, 0x372fb2c8 },
	{ 0xeb2c14a4, 0x9b3bdce1 },	{ 0xebeafcf4, 0x1396df4d },
	{ 0xecc3d37d, 0x901c8412 },	{ 0xf331adf7, 0xd60aea7e },
	{ 0xf666337c, 0x53e1a466 },	{ 0xfa58dc67, 0x80ca449b },
	{ 0xfa7dc787, 0xad8a1d92 },	{ 0xfcbaeacc, 0x076db7b8 },
	{ 0xfd2ec5a6, 0x8e2a726c },	{ 0xfea46fdb, 0x5286f13d },
};

/*
 * One bit per FI_KNR_BITS-bit slice of every "from" hash: almost every
 * preamble's hash is no unprototyped one, and one load says so without
 * the binary search (about 10% of other hashes share a bit). Also
 * checked by fi_knr_table_check().
 */
#define FI_KNR_BITS	10
static const uint64_t fi_knr_filter[(1u << FI_KNR_BITS) / 64] = {
	0x04008d0088801000ull,	0x0000000140000010ull,
	0xa004004022240110ull,	0x0200400c0d000360ull,
	0x7000000034000010ull,	0x8800000000240002ull,
	0x100000080000410aull,	0x0400000000010000ull,
	0x8000000810114005ull,	0x00ca004800140040ull,
	0x04040000080042c0ull,	0x0000848188000040ull,
	0x0000000140200000ull,	0x0108008028000000ull,
	0x4000000206000100ull,	0x0000200000000000ull,
};

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

/* The table and filter from the list, as fi_knr_map was generated. */
static void fi_knr_compute(struct fi_knr_pair *map, uint64_t *filter)
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
			for (k = n; k > 0 && map[k - 1].from > p.from; k--)
				map[k] = map[k - 1];
			map[k] = p;
			filter[fi_knr_slot(p.from) / 64] |=
				1ull << (fi_knr_slot(p.from) % 64);
			n++;
		}
	}
}

int fi_knr_table_check(void)
{
	struct fi_knr_pair map[FI_KNR_N];
	uint64_t filter[sizeof(fi_knr_filter) / sizeof(fi_knr_filter[0])] = { 0 };

	fi_knr_compute(map, filter);
	return memcmp(map, fi_knr_map, sizeof(map)) ||
	       memcmp(filter, fi_knr_filter, sizeof(filter)) ? -1 : 0;
}

uint32_t fi_knr_hash(uint32_t hash)
{
	size_t lo = 0, hi = FI_KNR_N;

	/* Asked once per preamble at start-up: no bsearch callback. */
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
