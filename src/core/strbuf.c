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

/* ---------------------------------------------------------------- printf */

/* @n bytes of @s (NULs too, as vsnprintf writes them), counted in @total
 * whether they fit or not. */
static void fi_fmt_put(struct fi_strbuf *b, const char *s, size_t n,
		       size_t *total)
{
	char *buf = b->buf;
	size_t len = b->len, room = b->cap ? b->cap - 1 : 0;

	*total += n;
	for (size_t i = 0; i < n; i++) {
		if (len >= room) {
			b->over = true;
			break;
		}
		buf[len++] = s[i];
	}
	b->len = len;
	if (b->cap)
		buf[len] = '\0';
}

static void fi_fmt_pad(struct fi_strbuf *b, char c, size_t n, size_t *total)
{
	char run[16];

	for (size_t i = 0; i < sizeof(run); i++)
		run[i] = c;
	while (n) {
		size_t k = n < sizeof(run) ? n : sizeof(run);

		fi_fmt_put(b, run, k, total);
		n -= k;
	}
}

enum {
	FI_FMT_LEFT = 1, FI_FMT_ZERO = 2, FI_FMT_ALT = 4, FI_FMT_SPACE = 8,
	FI_FMT_PLUS = 16,
};

/* @body[@n] padded to @width: spaces left or right, or zeros between the
 * prefix (@pre[@npre]: sign, 0x) and the digits. */
static void fi_fmt_field(struct fi_strbuf *b, const char *pre, size_t npre,
			 const char *body, size_t n, size_t width, int flags,
			 size_t *total)
{
	size_t fill = width > npre + n ? width - npre - n : 0;

	if (!(flags & (FI_FMT_LEFT | FI_FMT_ZERO)))
		fi_fmt_pad(b, ' ', fill, total);
	fi_fmt_put(b, pre, npre, total);
	if ((flags & (FI_FMT_LEFT | FI_FMT_ZERO)) == FI_FMT_ZERO)
		fi_fmt_pad(b, '0', fill, total);
	fi_fmt_put(b, body, n, total);
	if (flags & FI_FMT_LEFT)
		fi_fmt_pad(b, ' ', fill, total);
}

/* One integer conversion (@conv: d i u o x X p), as glibc prints it. */
static void fi_fmt_int(struct fi_strbuf *b, char conv, uint64_t v, bool neg,
		       int flags, size_t width, long prec, size_t *total)
{
	const char *digits = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned int base = conv == 'o' ? 8 : conv == 'x' || conv == 'X' || conv == 'p' ? 16 : 10;
	char tmp[24 + 512], *end = tmp + sizeof(tmp), *p = end;
	char pre[2];
	size_t npre = 0;
	bool zero = v == 0;

	if (prec > 512)
		prec = 512;
	while (v) {
		*--p = digits[v % base];
		v /= base;
	}
	/* An explicit precision of 0 prints no digit for 0. */
	while ((long)(end - p) < (prec < 0 ? 1 : prec))
		*--p = '0';
	if (conv == 'o' && (flags & FI_FMT_ALT) && (p == end || *p != '0'))
		*--p = '0';
	if (prec >= 0)
		flags &= ~FI_FMT_ZERO;
	if (conv == 'd' || conv == 'i') {
		if (neg)
			pre[npre++] = '-';
		else if (flags & FI_FMT_PLUS)
			pre[npre++] = '+';
		else if (flags & FI_FMT_SPACE)
			pre[npre++] = ' ';
	} else if (((flags & FI_FMT_ALT) && (conv == 'x' || conv == 'X') && !zero) ||
		   conv == 'p') {
		pre[npre++] = '0';
		pre[npre++] = conv == 'X' ? 'X' : 'x';
	}
	fi_fmt_field(b, pre, npre, p, (size_t)(end - p), width, flags, total);
}

size_t fi_strbuf_vprintf(struct fi_strbuf *b, const char *fmt, va_list ap)
{
	size_t total = 0;

	while (*fmt) {
		const char *start = fmt, *s;
		size_t width = 0, n;
		long prec = -1;
		int flags = 0, lng = 0;
		uint64_t v;
		bool neg = false;
		char c;

		while (*fmt && *fmt != '%')
			fmt++;
		fi_fmt_put(b, start, (size_t)(fmt - start), &total);
		if (!*fmt)
			break;
		start = fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				flags |= FI_FMT_LEFT;
			else if (*fmt == '0')
				flags |= FI_FMT_ZERO;
			else if (*fmt == '#')
				flags |= FI_FMT_ALT;
			else if (*fmt == ' ')
				flags |= FI_FMT_SPACE;
			else if (*fmt == '+')
				flags |= FI_FMT_PLUS;
			else
				break;
		}
		if (*fmt == '*') {
			int w = va_arg(ap, int);

			fmt++;
			if (w < 0) {
				flags |= FI_FMT_LEFT;
				width = -(size_t)w;
			} else {
				width = (size_t)w;
			}
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				width = width * 10 + (size_t)(*fmt++ - '0');
		}
		if (*fmt == '.') {
			fmt++;
			prec = 0;
			if (*fmt == '*') {
				int pr = va_arg(ap, int);

				fmt++;
				prec = pr < 0 ? -1 : pr;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					prec = prec * 10 + (*fmt++ - '0');
			}
		}
		/* Length: h and hh narrow, l ll z j t are 64 bits here. */
		for (;; fmt++) {
			if (*fmt == 'h')
				lng--;
			else if (*fmt == 'l' || *fmt == 'z' || *fmt == 'j' || *fmt == 't')
				lng = 1;
			else
				break;
		}
		switch (c = *fmt) {
		case 'd':
		case 'i': {
			int64_t x = lng > 0 ? va_arg(ap, int64_t) : va_arg(ap, int);

			if (lng == -1)
				x = (short)x;
			else if (lng < -1)
				x = (signed char)x;
			neg = x < 0;
			v = neg ? -(uint64_t)x : (uint64_t)x;
			fi_fmt_int(b, c, v, neg, flags, width, prec, &total);
			break;
		}
		case 'u':
		case 'o':
		case 'x':
		case 'X':
			v = lng > 0 ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int);
			if (lng == -1)
				v = (unsigned short)v;
			else if (lng < -1)
				v = (unsigned char)v;
			fi_fmt_int(b, c, v, false, flags, width, prec, &total);
			break;
		case 'p':
			v = (uint64_t)(uintptr_t)va_arg(ap, void *);
			if (v)
				fi_fmt_int(b, 'p', v, false, flags & ~FI_FMT_ZERO,
					   width, prec, &total);
			else
				fi_fmt_field(b, "", 0, "(nil)", 5, width,
					     flags & FI_FMT_LEFT, &total);
			break;
		case 'c': {
			char one = (char)va_arg(ap, int);

			fi_fmt_field(b, "", 0, &one, 1, width, flags & FI_FMT_LEFT,
				     &total);
			break;
		}
		case 's':
			s = va_arg(ap, const char *);
			/* glibc: "(null)", unless a precision too short for it. */
			if (!s)
				s = prec < 0 || prec >= 6 ? "(null)" : "";
			for (n = 0; (prec < 0 || n < (size_t)prec) && s[n]; n++)
				;
			fi_fmt_field(b, "", 0, s, n, width, flags & FI_FMT_LEFT,
				     &total);
			break;
		case '%':
			fi_fmt_put(b, "%", 1, &total);
			break;
		default:
			/* Not a conversion the runtime uses (floating point, %n,
			 * %m): the directive as written, no argument taken. */
			if (c)
				fmt++;
			fi_fmt_put(b, start, (size_t)(fmt - start), &total);
			continue;
		}
		fmt++;
	}
	return total;
}

size_t fi_strbuf_printf(struct fi_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = fi_strbuf_vprintf(b, fmt, ap);
	va_end(ap);
	return n;
}
