/* SPDX-License-Identifier: MIT */
/*
 * Decoding of the .fineibt section (layout in note.h; fineibt patch
 * encodes it: src/offline/noteenc.c). The decoder reads untrusted bytes:
 * every read is bounds-checked and every value range-checked, byte by
 * byte so the host's endianness and the buffer's alignment do not matter.
 */
#include <errno.h>
#include <string.h>

#include "note.h"

const char fi_note_magic[4] = { 'F', 'I', 'B', 'T' };

#define FI_NOTE_KNOWN_FLAGS \
	(FINEIBT_F_RAND | FINEIBT_F_WARN | FINEIBT_F_PARANOID | FINEIBT_F_BHI | \
	 FINEIBT_F_SEQ_V618)

/* Header checks shared by both decoders (note.h). */
int fi_note_check(const uint8_t *p, size_t len)
{
	size_t size;

	if (!p || len < 8 || memcmp(p, fi_note_magic, sizeof(fi_note_magic)))
		return -EINVAL;
	if (fi_note_le(p + 4, 2) != FI_NOTE_VERSION)
		return -EPROTONOSUPPORT;
	size = fi_note_le(p + 6, 2);
	if (size < FI_NOTE_SIZE || size > len)
		return -EINVAL;
	return 0;
}

int fi_note_decode(const void *buf, size_t len, struct fi_note *n)
{
	const uint8_t *p = buf;
	unsigned int mode, flags;
	int err;

	memset(n, 0, sizeof(*n));
	err = fi_note_check(p, len);
	if (err == -EPROTONOSUPPORT) {
		n->present = true;
		n->version = (uint16_t)fi_note_le(p + 4, 2);
	}
	if (err)
		return err;
	mode = p[8];
	flags = (unsigned int)fi_note_le(p + 12, 4);
	if (mode == FINEIBT_MODE_AUTO || mode > FINEIBT_MODE_FINEIBT)
		return -EINVAL;
	if (flags & ~FI_NOTE_KNOWN_FLAGS)
		return -EINVAL;
	if ((flags & (FINEIBT_F_PARANOID | FINEIBT_F_BHI)) &&
	    mode != FINEIBT_MODE_FINEIBT)
		return -EINVAL;
	n->present = true;
	n->version = FI_NOTE_VERSION;
	n->cfg.mode = (enum fineibt_mode)mode;
	n->cfg.flags = flags;
	memcpy(n->key.bytes, p + FI_NOTE_KEY, sizeof(n->key.bytes));
	n->bhi_args = fi_note_le(p + 24, 8);
	return 0;
}
