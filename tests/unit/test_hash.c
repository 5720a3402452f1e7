/* SPDX-License-Identifier: MIT */
/*
 * The keyed rehash (src/seq/hash.c), against a reference written here from
 * docs/sequences.md ("Hash randomisation"): a balanced Feistel network of
 * 10 rounds on the 16-bit halves of the hash (round i: (L, R) -> (R, L ^
 * F(i, R)), F = the low 16 bits of SipHash-2-4 under the 128-bit key of
 * the 4 bytes le16(R) le16(i)), then, while the value or its negation
 * reads as an ENDBR-like instruction, a Galois LFSR step (shift right one,
 * xor 0x80200003 when the bit shifted out was 1).
 *
 * SipHash-2-4 is checked against the 64 reference vectors of its
 * authors (key 00..0f, messages 00, 00 01, ... of length 0..63), both
 * the library's and the one written here. The rest: results equal the
 * reference and are never ENDBR-like; for one key the rehash is a
 * permutation (the inverse recovers every hash, and 2^20 hashes give
 * 2^20 results); every one of the 128 key bits changes results, by ~16
 * bits on average; keys that agree under any 32- or 64-bit reduction
 * (a slice, a fold) still give different permutations, so no 2^32 or
 * 2^64 search over such a reduction can stand in for the key; and a
 * search for the key from a known (compile-time, run-time) pair finds it
 * only where all but a few bits are known already, costing 2^8 more for
 * each unknown byte (2^128 for a whole key).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fineibt.h"
#include "hash.h"

/* SipHash-2-4's reference outputs, key 00 01 .. 0f, message 00 01 .. len-1. */
static const uint64_t sip_vectors[64] = {
	0x726fdb47dd0e0e31ull, 0x74f839c593dc67fdull, 0x0d6c8009d9a94f5aull,
	0x85676696d7fb7e2dull, 0xcf2794e0277187b7ull, 0x18765564cd99a68dull,
	0xcbc9466e58fee3ceull, 0xab0200f58b01d137ull, 0x93f5f5799a932462ull,
	0x9e0082df0ba9e4b0ull, 0x7a5dbbc594ddb9f3ull, 0xf4b32f46226bada7ull,
	0x751e8fbc860ee5fbull, 0x14ea5627c0843d90ull, 0xf723ca908e7af2eeull,
	0xa129ca6149be45e5ull, 0x3f2acc7f57c29bdbull, 0x699ae9f52cbe4794ull,
	0x4bc1b3f0968dd39cull, 0xbb6dc91da77961bdull, 0xbed65cf21aa2ee98ull,
	0xd0f2cbb02e3b67c7ull, 0x93536795e3a33e88ull, 0xa80c038ccd5ccec8ull,
	0xb8ad50c6f649af94ull, 0xbce192de8a85b8eaull, 0x17d835b85bbb15f3ull,
	0x2f2e6163076bcfadull, 0xde4daaaca71dc9a5ull, 0xa6a2506687956571ull,
	0xad87a3535c49ef28ull, 0x32d892fad841c342ull, 0x7127512f72f27cceull,
	0xa7f32346f95978e3ull, 0x12e0b01abb051238ull, 0x15e034d40fa197aeull,
	0x314dffbe0815a3b4ull, 0x027990f029623981ull, 0xcadcd4e59ef40c4dull,
	0x9abfd8766a33735cull, 0x0e3ea96b5304a7d0ull, 0xad0c42d6fc585992ull,
	0x187306c89bc215a9ull, 0xd4a60abcf3792b95ull, 0xf935451de4f21df2ull,
	0xa9538f0419755787ull, 0xdb9acddff56ca510ull, 0xd06c98cd5c0975ebull,
	0xe612a3cb9ecba951ull, 0xc766e62cfcadaf96ull, 0xee64435a9752fe72ull,
	0xa192d576b245165aull, 0x0a8787bf8ecb74b2ull, 0x81b3e73d20b49b6full,
	0x7fa8220ba3b2eceaull, 0x245731c13ca42499ull, 0xb78dbfaf3a8d83bdull,
	0xea1ad565322a1a0bull, 0x60e61c23a3795013ull, 0x6606d7e446282b93ull,
	0x6ca4ecb15c5f91e1ull, 0x9f626da15c9625f3ull, 0xe51b38608ef25f57ull,
	0x958a324ceb064572ull,
};

/* ------------------------------------------------------ the reference */

#define ROTL(v, n) (((v) << (n)) | ((v) >> (64 - (n))))

static uint64_t ref_le64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

/* SipHash-2-4 as the specification states it, one SipRound at a time. */
static uint64_t ref_siphash(const uint8_t key[16], const uint8_t *m, size_t len)
{
	uint64_t k0 = ref_le64(key, 8), k1 = ref_le64(key + 8, 8);
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
			  k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull };
	size_t nblocks = len / 8 + 1;

	for (size_t b = 0; b < nblocks; b++) {
		uint64_t mi;
		int rounds = 2;

		if (b + 1 < nblocks)
			mi = ref_le64(m + 8 * b, 8);
		else
			mi = ref_le64(m + 8 * b, len % 8) | (uint64_t)(len & 0xff) << 56;
		v[3] ^= mi;
		while (rounds--) {
			v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0];
			v[0] = ROTL(v[0], 32);
			v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
			v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
			v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2];
			v[2] = ROTL(v[2], 32);
		}
		v[0] ^= mi;
	}
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++) {
		v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0];
		v[0] = ROTL(v[0], 32);
		v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
		v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
		v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2];
		v[2] = ROTL(v[2], 32);
	}
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static uint32_t ref_f(const struct fineibt_key *k, uint32_t round, uint32_t half)
{
	uint8_t m[4] = { (uint8_t)half, (uint8_t)(half >> 8), (uint8_t)round,
			 (uint8_t)(round >> 8) };

	return (uint32_t)ref_siphash(k->bytes, m, 4) & 0xffff;
}

static uint32_t ref_prp(uint32_t h, const struct fineibt_key *k)
{
	uint32_t l = h >> 16, r = h & 0xffff;

	for (uint32_t i = 0; i < 10; i++) {
		uint32_t t = l ^ ref_f(k, i, r);

		l = r;
		r = t;
	}
	return l << 16 | r;
}

/* endbr64, endbr32, the poison, the BHI magic and the v6.18 poison. */
static bool ref_endbr_like(uint32_t v)
{
	return v == 0xfa1e0ff3u || v == 0xfb1e0ff3u || v == 0x001f0f66u ||
	       v == 0x001f0ff5u || v == 0xd6401f0fu;
}

static bool ref_bad(uint32_t v)
{
	return ref_endbr_like(v) || ref_endbr_like(0u - v);
}

static uint32_t ref_step(uint32_t v)
{
	return (v & 1) ? (v >> 1) ^ 0x80200003u : v >> 1;
}

static uint32_t ref_rehash(uint32_t h, const struct fineibt_key *k)
{
	uint32_t v = ref_prp(h, k);

	while (ref_bad(v))
		v = ref_step(v);
	return v;
}

/* The ten values the ENDBR-avoidance step starts from. */
static const uint32_t bad_vals[10] = {
	0xfa1e0ff3u, 0xfb1e0ff3u, 0x001f0f66u, 0x001f0ff5u, 0xd6401f0fu,
	0u - 0xfa1e0ff3u, 0u - 0xfb1e0ff3u, 0u - 0x001f0f66u,
	0u - 0x001f0ff5u, 0u - 0xd6401f0fu,
};

/* xorshift64: fast and fixed, so every run sees the same inputs. */
static uint64_t xs_state;

static uint64_t xs_next(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

static void xs_key(struct fineibt_key *k)
{
	uint64_t a = xs_next(), b = xs_next();

	for (int i = 0; i < 8; i++) {
		k->bytes[i] = (uint8_t)(a >> (8 * i));
		k->bytes[8 + i] = (uint8_t)(b >> (8 * i));
	}
}

/* ------------------------------------------------------------- tests */

static void test_siphash_vectors(void)
{
	struct fineibt_key k;
	uint8_t msg[64];
	bool lib = true, ref = true;

	for (int i = 0; i < 16; i++)
		k.bytes[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (size_t len = 0; len < 64; len++) {
		lib &= EXPECT("siphash: library", fi_siphash24(&k, msg, len) ==
			      sip_vectors[len]);
		ref &= EXPECT("siphash: reference", ref_siphash(k.bytes, msg, len) ==
			      sip_vectors[len]);
	}
	CHECK("siphash-2-4: the library gives the 64 reference vectors", lib);
	CHECK("siphash-2-4: so does the test's own reference", ref);
}

/*
 * Random (hash, key) pairs, one in four aimed (through the reference
 * network's inverse, fi_rehash_prp_inverse) at one of the ten values the
 * LFSR steps from: results equal the reference and are never ENDBR-like.
 */
static uint64_t sweep(unsigned n, bool *ok, unsigned *aimed)
{
	uint64_t sum = 0;

	xs_state = 0x2545f4914f6cdd1dull;
	*ok = true;
	*aimed = 0;
	for (unsigned i = 0; i < n; i++) {
		struct fineibt_key k;
		uint64_t r;
		uint32_t h, out;

		xs_key(&k);
		r = xs_next();
		h = (uint32_t)r;
		if ((r >> 32) % 4 == 0) {
			uint32_t b = bad_vals[(r >> 40) % 10];

			h = fi_rehash_prp_inverse(b, &k);
			*aimed += ref_prp(h, &k) == b;
		}
		out = fineibt_rehash(h, &k);
		if (ref_bad(out) || out != ref_rehash(h, &k)) {
			if (*ok)
				printf("  rehash(%#x) = %#x, reference %#x\n", h, out,
				       ref_rehash(h, &k));
			*ok = false;
		}
		sum = sum * 31 + out;
	}
	return sum;
}

static void test_sweep(void)
{
	const unsigned n = 200000;
	unsigned aimed, aimed2;
	bool ok, ok2;
	uint64_t a, b;

	a = sweep(n, &ok, &aimed);
	CHECK("rehash: 200k random (hash, key) pairs equal the reference, never ENDBR-like",
	      ok);
	CHECK("rehash: a quarter of them went through the LFSR (inverse aimed)",
	      aimed > n / 5);
	b = sweep(n, &ok2, &aimed2);
	CHECK("rehash: deterministic for the same inputs", a == b && ok2);
}

/*
 * Each bad value steps to the same value whatever the key (the step does
 * not depend on it): worked by hand, 0xfa1e0ff3 is odd, so 0x7d0f07f9 ^
 * 0x80200003.
 */
static void test_lfsr_vectors(void)
{
	static const struct { uint32_t in, out; } v[] = {
		{ 0xfa1e0ff3u, 0xfd2f07fau },	/* endbr64 */
		{ 0xfb1e0ff3u, 0xfdaf07fau },	/* endbr32 */
		{ 0x001f0f66u, 0x000f87b3u },	/* poison: even, plain shift */
		{ 0x001f0ff5u, 0x802f87f9u },	/* bhi magic */
		{ 0x05e1f00du, 0x82d0f805u },	/* -endbr64 */
		{ 0x04e1f00du, 0x8250f805u },	/* -endbr32 */
		{ 0xffe0f09au, 0x7ff0784du },	/* -poison */
		{ 0xffe0f00bu, 0xffd07806u },	/* -bhi magic */
	};

	xs_state = 0x6a09e667f3bcc909ull;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char name[96];
		bool ok = true;

		for (int s = 0; s < 3; s++) {
			struct fineibt_key k;
			uint32_t h, back;

			xs_key(&k);
			h = fi_rehash_prp_inverse(v[i].in, &k);
			ok &= fi_rehash_prp(h, &k) == v[i].in &&
			      fineibt_rehash(h, &k) == v[i].out;
			/* ... and the handler's inverse walks it back. */
			ok &= fi_rehash_inverse(v[i].out, &k, &back) != -ENOENT;
			ok &= fineibt_rehash(back, &k) == v[i].out;
		}
		snprintf(name, sizeof(name), "rehash: %#010x steps once to %#010x (3 keys)",
			 v[i].in, v[i].out);
		CHECK(name, ok && ref_step(v[i].in) == v[i].out && !ref_bad(v[i].out));
	}
}

/*
 * A permutation for each key: the inverse network recovers 1M hashes, the
 * library's full inverse (fi_rehash_inverse, what a trap report uses)
 * names the one compile-time hash of 1M results, and 2^20 consecutive
 * hashes (a block the low half spans) give 2^20 distinct results.
 */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void test_permutation(void)
{
	const uint32_t n = 1u << 20;
	uint32_t *out = malloc(n * sizeof(*out));
	struct fineibt_key k;
	bool inv = true, full = true;
	size_t dup = 0;

	if (!CHECK("permutation: memory", out))
		return;
	xs_state = 0x9e3779b97f4a7c15ull;
	xs_key(&k);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)xs_next(), back = 0, r = fineibt_rehash(h, &k);
		int err = fi_rehash_inverse(r, &k, &back);

		inv &= fi_rehash_prp_inverse(fi_rehash_prp(h, &k), &k) == h;
		full &= (err == 0 && back == h) || (err == -EEXIST &&
						    fineibt_rehash(back, &k) == r);
	}
	CHECK("permutation: the inverse network recovers 1M hashes", inv);
	CHECK("permutation: fi_rehash_inverse names the compile-time hash of 1M results",
	      full);
	for (uint32_t i = 0; i < n; i++)
		out[i] = fineibt_rehash(0x5a5a0000u + i, &k);
	qsort(out, n, sizeof(*out), cmp_u32);
	for (uint32_t i = 1; i < n; i++)
		dup += out[i] == out[i - 1];
	CHECK("permutation: 2^20 consecutive hashes, 2^20 distinct results", dup == 0);
	CHECK("inverse: an ENDBR-like value is no result",
	      fi_rehash_inverse(0xfa1e0ff3u, &k, &(uint32_t){ 0 }) == -EINVAL);
	free(out);
}

/*
 * Every key bit matters: flipping any one of the 128 changes the results
 * of four fixed hashes (a bit the function ignored would give identical
 * results), by 16 bits on average over 128 x 4 x 64 samples.
 */
static void test_key_bits(void)
{
	static const uint32_t known[4] = { 0, 0x12345678u, 0x2f6c5bd5u, 0xfa1e0ff3u };
	unsigned ignored = 0;
	uint64_t flips = 0, samples = 0;

	xs_state = 0x853c49e6748fea9bull;
	for (int trial = 0; trial < 64; trial++) {
		struct fineibt_key k;

		xs_key(&k);
		for (int bit = 0; bit < 128; bit++) {
			struct fineibt_key k2 = k;
			bool changed = false;

			k2.bytes[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			for (int j = 0; j < 4; j++) {
				uint32_t d = fineibt_rehash(known[j], &k) ^
					     fineibt_rehash(known[j], &k2);

				changed |= d != 0;
				flips += (uint64_t)__builtin_popcount(d);
				samples++;
			}
			ignored += !changed;
		}
	}
	CHECK("key: each of the 128 bits changes the results (64 keys)", ignored == 0);
	CHECK("key: a flipped key bit changes 16 +- 0.5 result bits on average",
	      flips * 2 >= samples * 31 && flips * 2 <= samples * 33);
}

/*
 * No 32- or 64-bit reduction of the key decides the permutation: pairs of
 * keys equal under one (the low or high 64 bits, any 32-bit word, the xor
 * of the two halves, the xor-fold to 32 bits) give different results on
 * eight known hashes. A 32-bit seed hidden in the key, or a function
 * of such a fold, would give identical ones, and a search over the
 * reduction's 2^32 or 2^64 values would then find an equivalent key.
 */
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static bool keys_differ(const struct fineibt_key *a, const struct fineibt_key *b)
{
	static const uint32_t known[8] = {
		0, 1, 0xffffffffu, 0x12345678u, 0xfa1e0ff3u, 0x001f0f66u,
		0x2f6c5bd5u, 0x9b6c2e41u,
	};
	unsigned same = 0;

	for (int i = 0; i < 8; i++)
		same += fineibt_rehash(known[i], a) == fineibt_rehash(known[i], b);
	return same < 8;
}

static void test_not_reducible(void)
{
	unsigned same[5] = { 0 };

	xs_state = 0xbb67ae8584caa73bull;
	for (int t = 0; t < 256; t++) {
		uint64_t lo = xs_next(), hi = xs_next(), d = xs_next();
		uint32_t d32 = (uint32_t)d;
		struct fineibt_key a, b;

		put64(a.bytes, lo);
		put64(a.bytes + 8, hi);
		/* Same low 64 bits. */
		b = a;
		put64(b.bytes + 8, hi ^ d);
		same[0] += !keys_differ(&a, &b);
		/* Same high 64 bits. */
		b = a;
		put64(b.bytes, lo ^ d);
		same[1] += !keys_differ(&a, &b);
		/* Same lo ^ hi. */
		put64(b.bytes, lo ^ d);
		put64(b.bytes + 8, hi ^ d);
		same[2] += !keys_differ(&a, &b);
		/* Same xor of the four 32-bit words. */
		put64(b.bytes, lo ^ ((uint64_t)d32 << 32 | d32));
		put64(b.bytes + 8, hi);
		same[3] += !keys_differ(&a, &b);
		/* Same word 0 (the bytes a 32-bit seed would take). */
		b = a;
		put64(b.bytes + 4, ((lo >> 32) ^ d) & 0xffffffffu);
		put64(b.bytes + 8, hi ^ d);
		same[4] += !keys_differ(&a, &b);
	}
	CHECK("key: same low 64 bits, different permutation (256 pairs)", same[0] == 0);
	CHECK("key: same high 64 bits, different permutation", same[1] == 0);
	CHECK("key: same xor of the halves, different permutation", same[2] == 0);
	CHECK("key: same 32-bit xor-fold, different permutation", same[3] == 0);
	CHECK("key: same first 32-bit word, different permutation", same[4] == 0);
}

/*
 * The search a known (compile-time, run-time) pair allows: try keys,
 * keep those that map the one to the other. Told all but the first 2
 * bytes of the key, 2^16 tries find it (and a second pair rules out
 * the ~2^-16 chance matches); told those 14 bytes with one of them wrong,
 * the same 2^16 tries find no key that fits a second pair. Every byte not
 * known multiplies the search by 256: 2^128 tries for a whole key, where
 * the 32-bit seed before fell to 2^32.
 */
static unsigned search(const struct fineibt_key *hint, const uint32_t ct[2],
		       const uint32_t rt[2], struct fineibt_key *found)
{
	unsigned fits = 0;

	for (uint32_t x = 0; x < 1u << 16; x++) {
		struct fineibt_key k = *hint;

		k.bytes[0] = (uint8_t)x;
		k.bytes[1] = (uint8_t)(x >> 8);
		if (fineibt_rehash(ct[0], &k) == rt[0] &&
		    fineibt_rehash(ct[1], &k) == rt[1]) {
			*found = k;
			fits++;
		}
	}
	return fits;
}

static void test_search(void)
{
	const uint32_t ct[2] = { 0x2f6c5bd5u, 0x9b6c2e41u };
	struct fineibt_key key, hint, found = { { 0 } };
	uint32_t rt[2];
	unsigned fits;

	xs_state = 0x3c6ef372fe94f82bull;
	xs_key(&key);
	rt[0] = fineibt_rehash(ct[0], &key);
	rt[1] = fineibt_rehash(ct[1], &key);
	hint = key;
	fits = search(&hint, ct, rt, &found);
	CHECK("search: 112 bits known, 2^16 tries find the key from two pairs",
	      fits == 1 && !memcmp(found.bytes, key.bytes, 16));
	hint.bytes[9] ^= 0x40;
	CHECK("search: one known bit wrong, 2^16 tries find no key",
	      search(&hint, ct, rt, &found) == 0);
}

static void test_random_key(void)
{
	struct fineibt_key k[64];
	uint8_t all_or[16] = { 0 }, all_and[16];
	int distinct = 0, rc = 0;
	bool every_bit = true;

	memset(all_and, 0xff, sizeof(all_and));
	for (int i = 0; i < 64; i++) {
		rc |= fineibt_random_key(&k[i]);
		for (int b = 0; b < 16; b++) {
			all_or[b] |= k[i].bytes[b];
			all_and[b] &= k[i].bytes[b];
		}
	}
	for (int i = 0; i < 64; i++) {
		bool dup = false;

		for (int j = 0; j < i; j++)
			dup |= !memcmp(&k[j], &k[i], sizeof(k[i]));
		distinct += !dup;
	}
	for (int b = 0; b < 16; b++)
		every_bit &= all_or[b] == 0xff && all_and[b] == 0;
	CHECK("random_key: returns 0", rc == 0);
	CHECK("random_key: 64 draws of 128 bits, all distinct", distinct == 64);
	/* Each bit stuck across 64 draws: probability 2^-63 per bit. */
	CHECK("random_key: every one of the 128 bits seen both set and clear",
	      every_bit);
}

int main(void)
{
	test_siphash_vectors();
	test_lfsr_vectors();
	test_permutation();
	test_key_bits();
	test_not_reducible();
	test_search();
	test_sweep();
	test_random_key();
	return fi_check_exit();
}
