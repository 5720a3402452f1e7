/* SPDX-License-Identifier: MIT */
/*
 * The bytes of an image, reached through its views only (image.h): a file
 * buffer, live text or a scratch copy, read and written alike by the
 * reader, site discovery, lazy symbols and the passes.
 */
#include <errno.h>
#include <string.h>

#include "elf_int.h"

uint8_t *fi_image_ptr(const struct fi_image *im, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		if (addr >= v->vaddr && fi_in_bounds(addr - v->vaddr, len, v->size))
			return v->mem + (addr - v->vaddr);
	}
	return NULL;
}

uint8_t *fi_image_text(const struct fi_image *im, uint64_t addr, size_t len)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];

		if (v->exec && addr >= v->vaddr &&
		    fi_in_bounds(addr - v->vaddr, len, v->size))
			return v->mem + (addr - v->vaddr);
	}
	return NULL;
}

int fi_image_poke(struct fi_image *im, uint64_t addr, const void *bytes,
		  size_t len)
{
	uint8_t *p = fi_image_text(im, addr, len);

	if (!p)
		return -EFAULT;
	memcpy(p, bytes, len);
	im->bytes_written += len;
	im->writes++;
	return 0;
}

/* The ud2 addresses of .kcfi_traps: a copy, or the live section itself. */
size_t fi_image_ntraps(const struct fi_image *im)
{
	return im->ktraps ? im->nktraps : im->ntraps;
}

uint64_t fi_image_trap(const struct fi_image *im, size_t i)
{
	return fi_trap_at(im, i);
}
