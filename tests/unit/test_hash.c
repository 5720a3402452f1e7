/* SPDX-License-Identifier: MIT */
/*
 * fineibt_rehash() and fineibt_random_seed(), against a reference written
 * here from docs/protection.md ("The seed"): new = fmix32(fmix32(old ^
 * seed) + seed * 0x9e3779b9 + 0x7f4a7c15) (fmix32: murmur3's finaliser),
 * then while new or -new reads as an ENDBR-like instruction, step a
 * Galois LFSR (shift right one, xor 0x80200003 when the bit shifted out
 * was 1). And what issue 18 asks of it: no result, and no difference of
 * results, gives the seed away by xor (the kernel's rehash is a plain xor:
 * fineibt_rehash(0, seed) used to be the seed).
 */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "fineibt.h"

#define NPAIRS	(16u << 20)	/* 16.7 million (hash, seed) pairs */

/*
 * endbr64, endbr32, the poison, the BHI magic and the v6.18 set's poison,
 * read little-endian.
 */
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

static uint32_t ref_fmix(uint32_t v)
{
	v ^= v >> 16;
	v *= 0x85ebca6bu;
	v ^= v >> 13;
	v *= 0xc2b2ae35u;
	v ^= v >> 16;
	return v;
}

/* The inverse of an odd multiplier modulo 2^32 (Newton's iteration). */
static uint32_t ref_inv(uint32_t a)
{
	uint32_t x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

static uint32_t ref_unfmix(uint32_t v)
{
	v ^= v >> 16;
	v *= ref_inv(0xc2b2ae35u);
	v ^= (v >> 13) ^ (v >> 26);
	v *= ref_inv(0x85ebca6bu);
	v ^= v >> 16;
	return v;
}

static uint32_t ref_key2(uint32_t seed)
{
	return seed * 0x9e3779b9u + 0x7f4a7c15u;
}

static uint32_t ref_mix(uint32_t hash, uint32_t seed)
{
	return ref_fmix(ref_fmix(hash ^ seed) + ref_key2(seed));
}

/* The compile-time hash that @seed mixes into @v (the mix is a bijection). */
static uint32_t ref_unmix(uint32_t v, uint32_t seed)
{
	return ref_unfmix(ref_unfmix(v) - ref_key2(seed)) ^ seed;
}

static uint32_t ref_rehash(uint32_t hash, uint32_t seed)
{
	uint32_t v = ref_mix(hash, seed);

	while (ref_bad(v))
		v = ref_step(v);
	return v;
}

/* xorshift64: fast and fixed, so every run sees the same pairs. */
static uint64_t xs_state;

static uint64_t xs_next(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return xs_state;
}

/*
 * The random sweep. To make the interesting inputs frequent, one pair in
 * 16 is aimed so that the mix gives one of the ten bad values.
 */
static uint64_t sweep(bool *ok, unsigned *aimed)
{
	static const uint32_t bad[10] = {
		0xfa1e0ff3u, 0xfb1e0ff3u, 0x001f0f66u, 0x001f0ff5u, 0xd6401f0fu,
		0u - 0xfa1e0ff3u, 0u - 0xfb1e0ff3u, 0u - 0x001f0f66u,
		0u - 0x001f0ff5u, 0u - 0xd6401f0fu,
	};
	uint64_t sum = 0;

	xs_state = 0x2545f4914f6cdd1dull;
	*ok = true;
	*aimed = 0;
	for (uint32_t i = 0; i < NPAIRS; i++) {
		uint64_t r = xs_next();
		uint32_t seed = (uint32_t)(r >> 32), hash = (uint32_t)r, out;

		if ((r & 0xf0000) == 0) {
			hash = ref_unmix(bad[((r >> 20) & 0xffff) % 10], seed);
			++*aimed;
		}
		out = fineibt_rehash(hash, seed);
		if (ref_bad(out) || out != ref_rehash(hash, seed)) {
			if (*ok)
				printf("  rehash(%#x, %#x) = %#x, reference %#x\n", hash,
				       seed, out, ref_rehash(hash, seed));
			*ok = false;
		}
		sum = sum * 31 + out;
	}
	return sum;
}

static void test_sweep(void)
{
	uint64_t a, b;
	unsigned aimed;
	bool ok, ok2;

	a = sweep(&ok, &aimed);
	CHECK("rehash: 16.7M random pairs: never ENDBR-like, nor negated", ok);
	CHECK("rehash: the sweep hit the LFSR more than 500k times", aimed > 500000);
	b = sweep(&ok2, &aimed);
	CHECK("rehash: deterministic for the same inputs", a == b && ok2);
}

/* The reference's inverse is one: the mix loses nothing (1M values). */
static void test_bijection(void)
{
	bool ok = true;

	xs_state = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 1000000; i++) {
		uint64_t r = xs_next();
		uint32_t h = (uint32_t)r, seed = (uint32_t)(r >> 32);
		uint32_t out = fineibt_rehash(h, seed);

		if (!ref_bad(ref_mix(h, seed)))
			ok &= out == ref_mix(h, seed) && ref_unmix(out, seed) == h;
	}
	CHECK("rehash: a permutation for each seed (inverse found, 1M values)", ok);
}

/*
 * Known compile-time hashes (0, the ENDBR-like values, a few real type
 * ids) and 2^16 seeds each: the result is never the seed, never the
 * hash xor the seed, and the results of h and h ^ x never differ by x,
 * nor those of one hash under two seeds by the seeds' xor. Each is a
 * 2^-32 event for a random function (~3.7M fixed tries: a chance hit
 * would be there in every run, so this cannot flake); xor, the kernel's
 * rehash, hits every one of them.
 */
static void test_not_xor(void)
{
	static const uint32_t known[] = {
		0, 1, 0xffffffffu, 0x12345678u, 0xfa1e0ff3u, 0x001f0f66u,
		0x2f6c5bd5u, 0x9b6c2e41u,
	};
	unsigned seed_eq = 0, xor_eq = 0, diff_eq = 0, seeds_eq = 0, zero = 0;
	uint32_t xs[] = { 1, 0x80000000u, 0x00010001u, 0xdeadbeefu };

	xs_state = 0x853c49e6748fea9bull;
	for (int i = 0; i < 65536; i++) {
		uint32_t seed = (uint32_t)xs_next(), seed2 = (uint32_t)xs_next();

		zero += fineibt_rehash(0, seed) == seed;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
			uint32_t h = known[k], out = fineibt_rehash(h, seed);

			seed_eq += out == seed;
			xor_eq += (out ^ h) == seed;
			seeds_eq += (out ^ fineibt_rehash(h, seed2)) == (seed ^ seed2);
			for (size_t j = 0; j < sizeof(xs) / sizeof(xs[0]); j++)
				diff_eq += (out ^ fineibt_rehash(h ^ xs[j], seed)) == xs[j];
		}
	}
	CHECK("rehash: rehash(0, seed) is never the seed (65536 seeds)", zero == 0);
	CHECK("rehash: a known hash's result is never the seed", seed_eq == 0);
	CHECK("rehash: result ^ hash is never the seed", xor_eq == 0);
	CHECK("rehash: results of h and h ^ x never differ by x", diff_eq == 0);
	CHECK("rehash: one hash under two seeds: results never differ by the seeds' xor",
	      seeds_eq == 0);
}

/* Worked by hand: 0xfa1e0ff3 is odd, so 0x7d0f07f9 ^ 0x80200003. */
static void test_vectors(void)
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

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		const uint32_t seeds[] = { 0, 0xdeadbeef, 0x80000001 };
		char name[80];
		bool ok = true;

		/* The compile-time hash each seed mixes into the bad value. */
		for (int s = 0; s < 3; s++)
			ok &= fineibt_rehash(ref_unmix(v[i].in, seeds[s]), seeds[s]) ==
			      v[i].out;
		snprintf(name, sizeof(name), "rehash: %#010x steps once to %#010x",
			 v[i].in, v[i].out);
		CHECK(name, ok && ref_mix(ref_unmix(v[i].in, 0), 0) == v[i].in &&
			    ref_step(v[i].in) == v[i].out && !ref_bad(v[i].out));
	}
}

static void test_random_seed(void)
{
	uint32_t s[64], all_or = 0, all_and = ~0u;
	int distinct = 0, rc = 0;

	for (int i = 0; i < 64; i++) {
		rc |= fineibt_random_seed(&s[i]);
		all_or |= s[i];
		all_and &= s[i];
	}
	for (int i = 0; i < 64; i++) {
		bool dup = false;

		for (int j = 0; j < i; j++)
			dup |= s[j] == s[i];
		distinct += !dup;
	}
	CHECK("random_seed: returns 0", rc == 0);
	/* 64 draws of 32 bits: a repeat has probability ~5e-7. */
	CHECK("random_seed: 64 draws, at least 63 distinct", distinct >= 63);
	/* Each bit stuck across 64 draws: probability 2^-63 per bit. */
	CHECK("random_seed: every bit seen both set and clear",
	      all_or == ~0u && all_and == 0);
}

int main(void)
{
	test_vectors();
	test_bijection();
	test_not_xor();
	test_sweep();
	test_random_seed();
	return fi_check_exit();
}
