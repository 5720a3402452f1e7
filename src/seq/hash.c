/* SPDX-License-Identifier: MIT */
/*
 * Hash randomisation: every preamble and caller hash goes through one
 * keyed permutation of the 32-bit values (a 128-bit key), then is stepped
 * along a Galois LFSR until neither the value nor its negation could be
 * mistaken for an ENDBR (a hash that decodes as ENDBR would hand an
 * attacker a landing pad inside the check itself). docs/sequences.md
 * ("Hash randomisation") has the rule, docs/protection.md ("The key") the
 * argument.
 *
 * The permutation is a balanced Feistel network on the two 16-bit halves,
 * FI_REHASH_ROUNDS rounds, whose round function is SipHash-2-4 keyed by
 * the 128-bit key over the 4-byte message (half, round number). SipHash is
 * a pseudo-random function of its key; a Feistel network over such rounds
 * is a permutation of the 32-bit values whatever the key (distinct hashes
 * stay distinct), and a known (compile-time, run-time) pair, or many, says
 * nothing usable about the 128 key bits.
 *
 * SipHash-2-4 is written here from its public specification (Aumasson and
 * Bernstein, "SipHash: a fast short-input PRF", 2012) and tested against
 * the reference vectors (tests/unit/test_hash.c).
 */
#include <errno.h>
#include <string.h>
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

/* The step's inverse: the bit shifted out is the top bit of @v's image. */
static uint32_t fi_lfsr_unstep(uint32_t v)
{
	if (v & 0x80000000u)
		return ((v ^ FI_LFSR_TAPS) << 1) | 1;
	return v << 1;
}

static inline uint64_t fi_rotl64(uint64_t v, int n)
{
	return (v << n) | (v >> (64 - n));
}

/* SipHash's state: initialised from the key, then compressed. */
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

static inline uint64_t fi_key_word(const struct fineibt_key *key, int i)
{
	uint64_t w = 0;

	/* Little-endian, as the specification reads k0 and k1. */
	for (int b = 7; b >= 0; b--)
		w = (w << 8) | key->bytes[8 * i + b];
	return w;
}

static inline struct fi_sip fi_sip_init(const struct fineibt_key *key)
{
	uint64_t k0 = fi_key_word(key, 0), k1 = fi_key_word(key, 1);

	return (struct fi_sip){
		.v0 = k0 ^ 0x736f6d6570736575ull,	/* "somepseu" */
		.v1 = k1 ^ 0x646f72616e646f6dull,	/* "dorandom" */
		.v2 = k0 ^ 0x6c7967656e657261ull,	/* "lygenera" */
		.v3 = k1 ^ 0x7465646279746573ull,	/* "tedbytes" */
	};
}

/* Two compression rounds over the 64-bit block @m. */
static inline void fi_sip_block(struct fi_sip *s, uint64_t m)
{
	s->v3 ^= m;
	fi_sip_round(s);
	fi_sip_round(s);
	s->v0 ^= m;
}

static inline uint64_t fi_sip_final(struct fi_sip *s)
{
	s->v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		fi_sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t fi_siphash24(const struct fineibt_key *key, const void *msg,
		      size_t len)
{
	const uint8_t *p = msg;
	struct fi_sip s = fi_sip_init(key);
	uint64_t last = (uint64_t)len << 56;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t m = 0;

		for (int b = 7; b >= 0; b--)
			m = (m << 8) | p[i + b];
		fi_sip_block(&s, m);
	}
	for (size_t b = 0; i + b < len; b++)
		last |= (uint64_t)p[i + b] << (8 * b);
	fi_sip_block(&s, last);
	return fi_sip_final(&s);
}

/*
 * The round function: the low 16 bits of SipHash-2-4 over the 4 bytes
 * (@half, @round), both little-endian 16-bit: one final block, whose
 * length byte (4) is the block's top byte. @init is the key's initial
 * state, the same for every round.
 */
static inline uint32_t fi_feistel_f(const struct fi_sip *init, uint32_t round,
				    uint32_t half)
{
	struct fi_sip s = *init;

	fi_sip_block(&s, (4ull << 56) | (uint64_t)round << 16 | half);
	return (uint32_t)fi_sip_final(&s) & 0xffff;
}

/*
 * The Feistel network: hash = L:R (high:low halves); round i maps (L, R)
 * to (R, L ^ F(i, R)); the result is L:R after the last round.
 */
uint32_t fi_rehash_prp(uint32_t hash, const struct fineibt_key *key)
{
	const struct fi_sip init = fi_sip_init(key);
	uint32_t l = hash >> 16, r = hash & 0xffff;

	for (uint32_t i = 0; i < FI_REHASH_ROUNDS; i++) {
		uint32_t t = l ^ fi_feistel_f(&init, i, r);

		l = r;
		r = t;
	}
	return l << 16 | r;
}

uint32_t fi_rehash_prp_inverse(uint32_t v, const struct fineibt_key *key)
{
	const struct fi_sip init = fi_sip_init(key);
	uint32_t l = v >> 16, r = v & 0xffff;

	for (uint32_t i = FI_REHASH_ROUNDS; i-- > 0;) {
		uint32_t t = r ^ fi_feistel_f(&init, i, l);

		r = l;
		l = t;
	}
	return l << 16 | r;
}

static bool fi_rehash_bad(uint32_t v)
{
	return fi_is_endbr_val(v) || fi_is_endbr_val(-v);
}

FINEIBT_API uint32_t fineibt_rehash(uint32_t hash, const struct fineibt_key *key)
{
	hash = fi_rehash_prp(hash, key);
	while (fi_rehash_bad(hash))
		hash = fi_lfsr_step(hash);
	return hash;
}

/*
 * Walk back from @v: the permutation's preimage of @v itself, then of
 * every value the LFSR could have stepped from (only while that value is
 * one the step is taken from: an ENDBR-like one). A candidate counts if
 * it rehashes to @v. Bounded: ten bad values, so at most ten steps back.
 */
int fi_rehash_inverse(uint32_t v, const struct fineibt_key *key,
		      uint32_t *out)
{
	uint32_t u = v;
	int found = 0;

	if (fi_rehash_bad(v))
		return -EINVAL;	/* never a result */
	for (int steps = 0; steps <= 10; steps++) {
		uint32_t h = fi_rehash_prp_inverse(u, key);

		if (fineibt_rehash(h, key) == v) {
			if (!found++)
				*out = h;
		}
		u = fi_lfsr_unstep(u);
		if (!fi_rehash_bad(u))
			break;
	}
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

FINEIBT_API int fineibt_random_key(struct fineibt_key *key)
{
	size_t got = 0;

	/* Not getrandom(): an interposer of it would run in the middle
	 * of the runtime's start-up (src/seq/rawsys.h). */
	while (got < sizeof(key->bytes)) {
		long n = fi_sys3(SYS_getrandom, (long)(key->bytes + got),
				 (long)(sizeof(key->bytes) - got), 0);

		if (n == -EINTR)
			continue;
		if (n <= 0) {
			memset(key, 0, sizeof(*key));
			return n < 0 ? (int)n : -EIO;
		}
		got += (size_t)n;
	}
	return 0;
}
