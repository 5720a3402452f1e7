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
