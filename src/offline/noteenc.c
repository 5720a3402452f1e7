/* SPDX-License-Identifier: MIT */
/*
 * Encoding of the .fineibt section (noteenc.h), and the decoding of the
 * counts only the CLI shows. Values are written byte by byte, little-endian.
 */
#include <errno.h>
#include <string.h>

#include "noteenc.h"

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t fi_sat32(size_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

ssize_t fi_note_encode(const struct fi_note *n, const struct fi_patch_stats *st,
		       void *buf, size_t len)
{
	const struct fi_patch_stats zero = { 0 };
	size_t counts[FI_NOTE_COUNTS];
	uint8_t *p = buf;

	if (len < FI_NOTE_SIZE)
		return -ENOSPC;
	if (n->cfg.mode == FINEIBT_MODE_AUTO || n->cfg.mode > FINEIBT_MODE_FINEIBT)
		return -EINVAL;
	if (!st)
		st = &zero;
	counts[0] = st->preambles;
	counts[1] = st->callers;
	counts[2] = st->bhi;
	counts[3] = st->bhi_inline;
	counts[4] = st->poisoned;
	counts[5] = st->dethunked;
	counts[6] = st->skipped;

	memset(p, 0, FI_NOTE_SIZE);
	memcpy(p, fi_note_magic, sizeof(fi_note_magic));
	put_le(p + 4, FI_NOTE_VERSION, 2);
	put_le(p + 6, FI_NOTE_SIZE, 2);
	p[8] = (uint8_t)n->cfg.mode;
	put_le(p + 12, n->cfg.flags, 4);
	put_le(p + 24, n->bhi_args, 8);
	for (int i = 0; i < FI_NOTE_COUNTS; i++)
		put_le(p + 32 + 4 * i, fi_sat32(counts[i]), 4);
	if (n->cfg.flags & FINEIBT_F_RAND)
		memcpy(p + FI_NOTE_KEY, n->key.bytes, sizeof(n->key.bytes));
	return FI_NOTE_SIZE;
}

int fi_note_decode_counts(const void *buf, size_t len,
			  struct fi_patch_stats *st)
{
	const uint8_t *p = buf;
	size_t *dst[FI_NOTE_COUNTS] = {
		&st->preambles, &st->callers, &st->bhi, &st->bhi_inline,
		&st->poisoned, &st->dethunked, &st->skipped,
	};
	int err;

	memset(st, 0, sizeof(*st));
	err = fi_note_check(p, len);
	if (err)
		return err;
	for (int i = 0; i < FI_NOTE_COUNTS; i++)
		*dst[i] = (size_t)fi_note_le(p + 32 + 4 * i, 4);
	return 0;
}

void fi_key_hex(const struct fineibt_key *key, char out[FI_KEY_HEX_LEN + 1])
{
	static const char digit[] = "0123456789abcdef";

	for (size_t i = 0; i < sizeof(key->bytes); i++) {
		out[2 * i] = digit[key->bytes[i] >> 4];
		out[2 * i + 1] = digit[key->bytes[i] & 15];
	}
	out[FI_KEY_HEX_LEN] = '\0';
}

static int fi_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int fi_key_parse(const char *s, struct fineibt_key *key)
{
	struct fineibt_key k;

	if (strlen(s) != FI_KEY_HEX_LEN)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(k.bytes); i++) {
		int hi = fi_hex_digit(s[2 * i]), lo = fi_hex_digit(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		k.bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	*key = k;
	return 0;
}
