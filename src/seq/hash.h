/* SPDX-License-Identifier: MIT */
/*
 * The keyed rehash's internals (src/seq/hash.c; the public entry points,
 * fineibt_rehash and fineibt_random_key, are in include/fineibt.h).
 */
#ifndef FI_HASH_H
#define FI_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "fineibt.h"

/*
 * Rounds of the Feistel network (docs/protection.md, "The key": NIST's
 * FF1 format-preserving cipher takes 10 Feistel rounds for small domains
 * as well, and the known generic attacks on more than five rounds with
 * 16-bit halves need far more work than the 2^128 keys).
 */
#define FI_REHASH_ROUNDS	10

/* SipHash-2-4 of @len bytes at @msg under @key (the 64-bit output). */
uint64_t fi_siphash24(const struct fineibt_key *key, const void *msg,
		      size_t len);

/* The keyed permutation alone (no ENDBR avoidance), and its inverse. */
uint32_t fi_rehash_prp(uint32_t hash, const struct fineibt_key *key);
uint32_t fi_rehash_prp_inverse(uint32_t v, const struct fineibt_key *key);

/*
 * The compile-time hash that fineibt_rehash(., @key) maps to run-time
 * hash @v, into *@out: 0; -ENOENT (no hash maps to @v: it is not a
 * run-time hash of this key), -EEXIST (two do: the ENDBR-avoidance step
 * made them meet; *@out is one of them), -EINVAL (@v is ENDBR-like, never
 * a result). Async-signal-safe; costs about two rehashes.
 */
int fi_rehash_inverse(uint32_t v, const struct fineibt_key *key,
		      uint32_t *out);

#endif /* FI_HASH_H */
