/* SPDX-License-Identifier: MIT */
/* The bounded string builder (strbuf.h): async-signal-safe, no libc. */
#include "strbuf.h"

void fi_strbuf_init(struct fi_strbuf *b, char *buf, size_t cap, size_t used)
{
	b->buf = buf;
	b->cap = cap;
	b->len = used < cap ? used : (cap ? cap - 1 : 0);
	b->over = used >= cap;
	if (cap)
		buf[b->len] = '\0';
}

void fi_strbuf_str(struct fi_strbuf *b, const char *s)
{
	/* In locals: a store through a char pointer may alias *b. */
	char *buf = b->buf;
	size_t len = b->len, room = b->cap ? b->cap - 1 : 0;

	while (*s && len < room)
		buf[len++] = *s++;
	b->len = len;
	if (*s)
		b->over = true;
	if (b->cap)
		buf[len] = '\0';
}

void fi_strbuf_char(struct fi_strbuf *b, char c)
{
	char one[2] = { c, '\0' };

	if (!c)
		return;
	fi_strbuf_str(b, one);
}

static int fi_strbuf_width(int width, int max)
{
	return width < 1 ? 1 : width > max ? max : width;
}

void fi_strbuf_dec(struct fi_strbuf *b, uint64_t v, int width)
{
	char tmp[FI_STRBUF_DEC_MAX + 1], *p = tmp + sizeof(tmp) - 1;
	int n = 0;

	width = fi_strbuf_width(width, FI_STRBUF_DEC_MAX);
	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (++n < width || v);
	fi_strbuf_str(b, p);
}

/* @v's hex digits after @prefix ("0x" or ""), from the right of a stack buffer. */
static void fi_strbuf_hex_as(struct fi_strbuf *b, uint64_t v, int width,
			     bool prefix)
{
	char tmp[2 + FI_STRBUF_HEX_MAX + 1], *p = tmp + sizeof(tmp) - 1;
	int n = 0;

	width = fi_strbuf_width(width, FI_STRBUF_HEX_MAX);
	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (++n < width || v);
	if (prefix) {
		*--p = 'x';
		*--p = '0';
	}
	fi_strbuf_str(b, p);
}

void fi_strbuf_hex(struct fi_strbuf *b, uint64_t v, int width)
{
	fi_strbuf_hex_as(b, v, width, true);
}

void fi_strbuf_xdigits(struct fi_strbuf *b, uint64_t v, int width)
{
	fi_strbuf_hex_as(b, v, width, false);
}
