/* SPDX-License-Identifier: MIT */
/*
 * The DWARF reading shared by the line lookup (dwline.c) and the prototype
 * lookup (dwinfo.c): a bounds-checked byte cursor with a sticky error, and
 * the lookup of one uncompressed ELF section. Nothing here allocates: both
 * users run in the SIGILL handler.
 */
#ifndef FI_DWARF_H
#define FI_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fi_dw {
	const uint8_t *p, *end;
	bool bad;		/* sticky: a read went past the end */
};

struct fi_dw_sect {
	const uint8_t *data;
	size_t size;
};

static inline uint64_t fi_dw_uint(struct fi_dw *d, size_t n)
{
	uint64_t v = 0;

	if (d->bad || (size_t)(d->end - d->p) < n) {
		d->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)d->p[i] << (8 * i);
	d->p += n;
	return v;
}

static inline uint64_t fi_dw_uleb(struct fi_dw *d)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (!d->bad) {
		uint8_t b = (uint8_t)fi_dw_uint(d, 1);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static inline int64_t fi_dw_sleb(struct fi_dw *d)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	while (!d->bad) {
		b = (uint8_t)fi_dw_uint(d, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

/* A NUL-terminated string in place (NULL if it runs off the end). */
static inline const char *fi_dw_str(struct fi_dw *d)
{
	const char *s = (const char *)d->p;
	const uint8_t *nul;

	if (d->bad)
		return NULL;
	nul = memchr(d->p, 0, (size_t)(d->end - d->p));
	if (!nul) {
		d->bad = true;
		return NULL;
	}
	d->p = nul + 1;
	return s;
}

static inline void fi_dw_skip(struct fi_dw *d, uint64_t n)
{
	if (d->bad || (uint64_t)(d->end - d->p) < n)
		d->bad = true;
	else
		d->p += n;
}

/* The ELF section @name of @file (not compressed); false (and @out empty) if absent. */
bool fi_dw_section(const uint8_t *file, size_t size, const char *name,
		   struct fi_dw_sect *out);

struct fi_image;

/*
 * The bytes of @im's file: its buffer when the image keeps one, else a
 * read-only mapping of the file at im->path (-ENOENT if it cannot be had).
 * Release with fi_dw_file_close(). Plain system calls only.
 */
int fi_dw_file_open(const struct fi_image *im, struct fi_dw_sect *bytes);
void fi_dw_file_close(const struct fi_image *im, struct fi_dw_sect *bytes);

#endif /* FI_DWARF_H */
