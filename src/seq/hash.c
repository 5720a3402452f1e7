/* SPDX-License-Identifier: MIT */
/*
 * Per-process hash randomisation: every preamble and caller hash goes
 * through one keyed permutation of the 32-bit space (the seed is the key),
 * then is stepped along a Galois LFSR until neither the value nor its
 * negation could be mistaken for an ENDBR (a hash that decodes as ENDBR
 * would hand an attacker a landing pad inside the check itself).
 *
 * Not the kernel's plain xor with the seed: there, any run-time hash of a
 * known type gives the seed away (and fineibt_rehash_hash(0) returned it
 * outright), and with it the run-time hash of every other type. Here the
 * pieces are bijections (xor, add, multiply by an odd constant, xorshift),
 * so for one seed distinct compile-time hashes stay distinct as before,
 * but no algebra links two outputs or an output to the seed: learning the
 * seed from (compile-time, run-time) pairs takes trying the 2^32 seeds.
 */
#include <errno.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "fineibt.h"
#include "hash.h"
#include "insn.h"
#include "rawsys.h"

#define FI_LFSR_TAPS 0x80200003u

static uint32_t fi_lfsr_step(uint32_t v)
{
	uint32_t out = v & 1;

	v >>= 1;
	if (out)
		v ^= FI_LFSR_TAPS;
	return v;
}

/* murmur3's finaliser: a bijection of 32-bit values with full avalanche. */
static uint32_t fi_fmix32(uint32_t v)
{
	v ^= v >> 16;
	v *= 0x85ebca6bu;
	v ^= v >> 13;
	v *= 0xc2b2ae35u;
	v ^= v >> 16;
	return v;
}

FINEIBT_API uint32_t fineibt_rehash(uint32_t hash, uint32_t seed)
{
	/* A second key, from the seed by a bijection (odd multiplier). */
	uint32_t key2 = seed * 0x9e3779b9u + 0x7f4a7c15u;

	hash = fi_fmix32(fi_fmix32(hash ^ seed) + key2);
	while (fi_is_endbr_val(hash) || fi_is_endbr_val(-hash))
		hash = fi_lfsr_step(hash);
	return hash;
}

FINEIBT_API int fineibt_random_seed(uint32_t *seed)
{
	ssize_t n;

	/* Not getrandom(): an interposer of it would run in the middle
	 * of the runtime's start-up (src/seq/rawsys.h). */
	do {
		n = fi_sys3(SYS_getrandom, (long)seed, sizeof(*seed), 0);
	} while (n == -EINTR);
	if (n != (ssize_t)sizeof(*seed))
		return n < 0 ? (int)n : -EIO;
	return 0;
}

static inline uint64_t fi_rotl64(uint64_t v, int n)
{
	return (v << n) | (v >> (64 - n));
}

struct fi_sip {
	uint64_t v0, v1, v2, v3;
};

static inline void fi_sip_round(struct fi_sip *s)
{
	s->v0 += s->v1;
	s->v1 = fi_rotl64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = fi_rotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = fi_rotl64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = fi_rotl64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = fi_rotl64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = fi_rotl64(s->v2, 32);
}

static inline uint64_t fi_le64(const uint8_t *p)
{
	uint64_t w = 0;

	for (int b = 7; b >= 0; b--)
		w = (w << 8) | p[b];
	return w;
}

static inline void fi_sip_block(struct fi_sip *s, uint64_t m)
{
	s->v3 ^= m;
	fi_sip_round(s);
	fi_sip_round(s);
	s->v0 ^= m;
}

/* SipHash-2-4, from its public specification (Aumasson, Bernstein 2012). */
uint64_t fi_siphash24(const struct fineibt_key *key, const void *msg,
		      size_t len)
{
	const uint8_t *p = msg;
	uint64_t k0 = fi_le64(key->bytes), k1 = fi_le64(key->bytes + 8);
	struct fi_sip s = {
		.v0 = k0 ^ 0x736f6d6570736575ull, .v1 = k1 ^ 0x646f72616e646f6dull,
		.v2 = k0 ^ 0x6c7967656e657261ull, .v3 = k1 ^ 0x7465646279746573ull,
	};
	uint64_t last = (uint64_t)len << 56;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		fi_sip_block(&s, fi_le64(p + i));
	for (size_t b = 0; i + b < len; b++)
		last |= (uint64_t)p[i + b] << (8 * b);
	fi_sip_block(&s, last);
	s.v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		fi_sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
