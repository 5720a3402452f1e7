/* SPDX-License-Identifier: MIT */
/*
 * The .fineibt note decoder on arbitrary bytes (a file's section, so
 * untrusted); a record it accepts must encode back to the same values.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "noteenc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fi_patch_stats st, st2;
	struct fi_note n, n2;
	uint8_t *copy = malloc(size ? size : 1), enc[FI_NOTE_SIZE];

	if (!copy)
		return 0;
	/* An exact-size heap copy so ASan sees any read past the section. */
	memcpy(copy, data, size);
	memset(&n, 0, sizeof(n));
	if (fi_note_decode(copy, size, &n) == 0 &&
	    fi_note_decode_counts(copy, size, &st) == 0) {
		if (!n.present)
			abort();
		if (fi_note_encode(&n, &st, enc, sizeof(enc)) != FI_NOTE_SIZE ||
		    fi_note_decode(enc, sizeof(enc), &n2) ||
		    fi_note_decode_counts(enc, sizeof(enc), &st2) ||
		    n2.cfg.mode != n.cfg.mode || n2.cfg.flags != n.cfg.flags ||
		    (n.cfg.flags & FINEIBT_F_RAND &&
		     memcmp(&n2.key, &n.key, sizeof(n.key))) || n2.bhi_args != n.bhi_args ||
		    memcmp(&st, &st2, sizeof(st)))
			abort();
	}
	free(copy);
	return 0;
}
