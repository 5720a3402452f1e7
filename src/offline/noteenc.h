/* SPDX-License-Identifier: MIT */
/*
 * The .fineibt record as `fineibt patch` writes it, with the passes'
 * counts (layout in src/elf/note.h, which reads it back at run time).
 * Tooling only: not in libfineibt.
 */
#ifndef FI_NOTEENC_H
#define FI_NOTEENC_H

#include <stddef.h>
#include <sys/types.h>

#include "note.h"
#include "patch.h"

/*
 * Encode @n (and @st's counts, if not NULL) into @buf. Returns the number
 * of bytes written (FI_NOTE_SIZE) or -ENOSPC / -EINVAL (AUTO mode).
 */
ssize_t fi_note_encode(const struct fi_note *n, const struct fi_patch_stats *st,
		       void *buf, size_t len);

/* The counts recorded with the note (0 when absent); same return values. */
int fi_note_decode_counts(const void *buf, size_t len,
			  struct fi_patch_stats *st);

/*
 * A rehash key as `fineibt patch --key` takes it and `fineibt inspect`
 * shows it: 32 hex digits, bytes[0] first. fi_key_hex writes 33 bytes
 * (NUL included); fi_key_parse returns 0 or -EINVAL.
 */
#define FI_KEY_HEX_LEN	(2 * sizeof(((struct fineibt_key *)0)->bytes))
void fi_key_hex(const struct fineibt_key *key, char out[FI_KEY_HEX_LEN + 1]);
int fi_key_parse(const char *s, struct fineibt_key *key);

#endif /* FI_NOTEENC_H */
