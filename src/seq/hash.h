/* SPDX-License-Identifier: MIT */
/*
 * The keyed hash's internals: the 128-bit key and SipHash-2-4 over it
 * (src/seq/hash.c).
 */
#ifndef FI_HASH_H
#define FI_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "fineibt.h"

#ifndef FINEIBT_KEY_BYTES
#define FINEIBT_KEY_BYTES 16
/* A key: 128 secret bits (SipHash-2-4's k0 = bytes 0..7, k1 = 8..15). */
struct fineibt_key {
	uint8_t bytes[FINEIBT_KEY_BYTES];
};
#endif

/* SipHash-2-4 of @len bytes at @msg under @key (the 64-bit output). */
uint64_t fi_siphash24(const struct fineibt_key *key, const void *msg,
		      size_t len);

#endif /* FI_HASH_H */
