/* SPDX-License-Identifier: MIT */
/*
 * A bounded string builder for text composed where stdio may not run:
 * the SIGILL handler's reports (docs/traps.md), the system log's prefix,
 * symbol names, the shared text cache's names. Async-signal-safe: no
 * allocation, no locale, no libc call at all.
 *
 * Every append stops at the capacity (the bytes that do not fit are
 * dropped and `over` is set) and leaves the buffer NUL-terminated: a
 * builder over @cap bytes holds at most @cap - 1 characters. A builder
 * over no bytes (cap 0) writes nothing, not even the NUL.
 */
#ifndef FI_STRBUF_H
#define FI_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fi_strbuf {
	char *buf;
	size_t cap;		/* bytes of @buf, the NUL included */
	size_t len;		/* characters in @buf, before its NUL */
	bool over;		/* an append did not fit */
};

/* The widest digit strings: 2^64 - 1 in decimal and in hex. */
#define FI_STRBUF_DEC_MAX	20
#define FI_STRBUF_HEX_MAX	16

/*
 * A builder over @buf[@cap] that goes on after the first @used
 * characters already there (0: an empty string). @used >= @cap counts
 * as full: nothing more is appended and `over` is set.
 */
void fi_strbuf_init(struct fi_strbuf *b, char *buf, size_t cap, size_t used);

void fi_strbuf_str(struct fi_strbuf *b, const char *s);
void fi_strbuf_char(struct fi_strbuf *b, char c);
/* @v in decimal, zero-padded to at least @width digits (at most 20). */
void fi_strbuf_dec(struct fi_strbuf *b, uint64_t v, int width);
/* "0x" and @v in lower-case hex, at least @width digits (at most 16). */
void fi_strbuf_hex(struct fi_strbuf *b, uint64_t v, int width);
/* The same digits without the "0x". */
void fi_strbuf_xdigits(struct fi_strbuf *b, uint64_t v, int width);

/*
 * printf's format, appended: the conversions d i u o x X p c s and %%,
 * with the flags - 0 # space +, a width and a precision (numbers or *),
 * the lengths hh h l ll z j t, printed as glibc prints them in any
 * locale (no grouping, no wide characters). Anything else (floating
 * point, %n, %m) is appended as written and takes no argument: the
 * runtime prints none of them. Returns the length of the whole text,
 * what did not fit included (vsnprintf's count). libfineibt.so's
 * snprintf and vsnprintf (src/load/ownlibc.c).
 */
size_t fi_strbuf_vprintf(struct fi_strbuf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
size_t fi_strbuf_printf(struct fi_strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* FI_STRBUF_H */
