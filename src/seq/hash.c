/* SPDX-License-Identifier: MIT */
/*
 * Per-process hash randomisation: every preamble and caller hash is xored
 * with one seed, then stepped along a Galois LFSR until neither the value
 * nor its negation could be mistaken for an ENDBR (a hash that decodes as
 * ENDBR would hand an attacker a landing pad inside the check itself).
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

FINEIBT_API uint32_t fineibt_rehash(uint32_t hash, uint32_t seed)
{
	hash ^= seed;
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
