/* SPDX-License-Identifier: MIT */
/*
 * The .fineibt section: what `fineibt patch` did to a file.
 *
 * NOTE TO elf.c: when reading a file, look for a section named
 * FI_NOTE_SECTION (".fineibt") and pass its contents to fi_note_decode()
 * to fill im->note. The decoder sets note->present whenever the magic
 * matches, even for a version it does not understand (it then returns
 * -EPROTONOSUPPORT), so that such a file is still refused by the passes
 * as "already patched" instead of being patched a second time.
 *
 * Layout (version 3, 80 bytes, every field little-endian):
 *
 *   0  char  magic[4]     "FIBT"
 *   4  u16   version      3 (1: hashes rehashed as hash ^ seed; 2: a
 *                         32-bit seed at 16 and a mix of it; 3: the
 *                         128-bit key at 64 and the Feistel network of
 *                         docs/sequences.md. A file of another version is
 *                         refused by the runtime: its hashes cannot be
 *                         matched)
 *   6  u16   size         bytes of this record (80); readers skip the rest
 *   8  u8    mode         enum fineibt_mode (never AUTO)
 *   9  u8    reserved[3]  0
 *  12  u32   flags        enum fineibt_flag
 *  16  u32   reserved     0 (version 2's seed)
 *  20  u32   reserved     0
 *  24  u64   bhi_args     link-time __bhi_args used for BHI, 0 if none
 *  32  u32   counts[7]    preambles, callers, bhi, bhi_inline, poisoned,
 *                         dethunked, skipped (struct fi_patch_stats)
 *  60  u32   reserved     0
 *  64  u8    key[16]      the rehash key (zero unless flags has RAND)
 *
 * A non-SHF_ALLOC SHT_PROGBITS section: it takes no memory at run time and
 * is never loaded, so it cannot change what runs.
 */
#ifndef FI_NOTE_H
#define FI_NOTE_H

#include <stddef.h>
#include <sys/types.h>

#include "image.h"

#define FI_NOTE_SECTION		".fineibt"
#define FI_NOTE_VERSION		3
#define FI_NOTE_SIZE		80
#define FI_NOTE_KEY		64
#define FI_NOTE_COUNTS		7

/*
 * Decode the @len bytes of a .fineibt section. Returns 0, -EINVAL (not a
 * .fineibt record, truncated, or impossible values) or -EPROTONOSUPPORT
 * (a later version: @n->present is set, the rest is not trusted).
 */
int fi_note_decode(const void *buf, size_t len, struct fi_note *n);

/*
 * Shared with the encoder (src/offline/noteenc.c): the magic, the header
 * checks of both decoders (0, -EINVAL or -EPROTONOSUPPORT), and the
 * little-endian read of @n bytes at @p.
 */
extern const char fi_note_magic[4];
int fi_note_check(const uint8_t *p, size_t len);

static inline uint64_t fi_note_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#endif /* FI_NOTE_H */
