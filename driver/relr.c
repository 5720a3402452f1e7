// SPDX-License-Identifier: MIT
/*
 * After a link: take the relative relocations of one range (the module's
 * __patchable_function_entries) out of the output's DT_RELR table, so that
 * the loader never writes that range and its pages stay clean, shared with
 * the file (docs/index.md, "Entries at link-time values").
 *
 * A RELR table (the ELF gABI's SHT_RELR) is a list of 64-bit words: an
 * even word is an address to relocate, and the next place is that address
 * + 8; an odd word is a bitmap whose bit b (1 to 63) relocates the place
 * (b - 1) * 8 bytes after the next place, which then moves on by 63 * 8.
 * The table is decoded into its addresses, those in the range dropped and
 * the rest encoded again (addresses first, bitmaps after, as linkers do);
 * the new table is written over the old one's first words, the rest of
 * the old table zeroed, and DT_RELRSZ (with the size of the SHT_RELR
 * section that holds the table) shrunk to the new one. A table that would
 * not fit in the old one's bytes (dropping places can split a bitmap) is
 * left alone, and so is every output whose range a RELA relocation
 * writes (a -z nopack-relative-relocs link): only a range no dynamic
 * relocation writes holds link-time values the runtime may read as such.
 * The values are the linker's: RELR keeps each place's addend in place.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

#ifndef DT_RELR
#define DT_RELRSZ	35
#define DT_RELR		36
#define DT_RELRENT	37
#endif

/* Places one bitmap word covers, after the next place. */
#define FI_RELR_BITS	63

/* The dynamic section's entries and where the output's loader finds them. */
struct fi_relr_dyn {
	uint64_t relr, relrsz, relrent, rela, relasz, relaent;
	uint64_t relrsz_at;	/* file offset of DT_RELRSZ's d_val */
	bool has_relr;
};

static bool fi_relr_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	return pwrite(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* File offset of [@a, @a + @len) in a PT_LOAD's file bytes, within the
 * file's @size, or 0. */
static uint64_t fi_relr_offset(const Elf64_Phdr *ph, size_t phnum,
			       uint64_t a, uint64_t len, uint64_t size)
{
	int64_t off = fi_file_off(ph, phnum, a, len);

	return off < 0 || (uint64_t)off + len > size ? 0 : (uint64_t)off;
}

/* The output's PT_DYNAMIC, read; false if it has none we can read. */
static bool fi_relr_dynamic(int fd, uint64_t size, const Elf64_Phdr *ph,
			    size_t phnum, struct fi_relr_dyn *d)
{
	const Elf64_Phdr *dyn = NULL;
	Elf64_Dyn e;

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = &ph[i];
	}
	if (!dyn || dyn->p_offset > size || dyn->p_filesz > size - dyn->p_offset)
		return false;
	for (uint64_t at = 0; at + sizeof(e) <= dyn->p_filesz; at += sizeof(e)) {
		if (!fi_pread_full(fd, &e, sizeof(e), dyn->p_offset + at))
			return false;
		if (e.d_tag == DT_NULL)
			break;
		switch (e.d_tag) {
		case DT_RELR:
			d->relr = e.d_un.d_ptr;
			d->has_relr = true;
			break;
		case DT_RELRSZ:
			d->relrsz = e.d_un.d_val;
			d->relrsz_at = dyn->p_offset + at +
				       offsetof(Elf64_Dyn, d_un);
			break;
		case DT_RELRENT:
			d->relrent = e.d_un.d_val;
			break;
		case DT_RELA:
			d->rela = e.d_un.d_ptr;
			break;
		case DT_RELASZ:
			d->relasz = e.d_un.d_val;
			break;
		case DT_RELAENT:
			d->relaent = e.d_un.d_val;
			break;
		}
	}
	return true;
}

/* Does a DT_RELA record write a place of [@lo, @hi)? (Or a doubt.) */
static bool fi_relr_rela_writes(int fd, uint64_t size, const Elf64_Phdr *ph,
				size_t phnum, const struct fi_relr_dyn *d,
				uint64_t lo, uint64_t hi)
{
	uint64_t off;
	Elf64_Rela *r;
	bool writes = true;

	if (!d->relasz)
		return false;
	if (d->relaent != sizeof(*r) || d->relasz % sizeof(*r))
		return true;
	off = fi_relr_offset(ph, phnum, d->rela, d->relasz, size);
	r = off ? malloc(d->relasz) : NULL;
	if (r && fi_pread_full(fd, r, d->relasz, off)) {
		writes = false;
		for (size_t i = 0; !writes && i < d->relasz / sizeof(*r); i++)
			writes = r[i].r_offset >= lo && r[i].r_offset < hi;
	}
	free(r);
	return writes;
}

/*
 * The addresses of @nw words of RELR @w without those in [@lo, @hi), into
 * @a (room for all of them); their number, and in @dropped how many went.
 * SIZE_MAX: not a table we encode again (an odd or unordered address).
 */
static size_t fi_relr_decode(const uint64_t *w, size_t nw, uint64_t lo,
			     uint64_t hi, uint64_t *a, size_t *dropped)
{
	uint64_t next = 0, last = 0;
	size_t n = 0;
	bool any = false;

	*dropped = 0;
	for (size_t i = 0; i < nw; i++) {
		uint64_t at[FI_RELR_BITS];
		unsigned int k = 0;

		if (!(w[i] & 1)) {
			at[k++] = w[i];
			next = w[i] + 8;
		} else {
			if (!any)
				return SIZE_MAX;	/* a bitmap first */
			for (unsigned int b = 1; b < 64; b++) {
				if (w[i] >> b & 1)
					at[k++] = next + (b - 1) * 8ull;
			}
			next += FI_RELR_BITS * 8ull;
		}
		for (unsigned int j = 0; j < k; j++) {
			if ((any && at[j] <= last) || (at[j] & 1))
				return SIZE_MAX;
			any = true;
			last = at[j];
			if (at[j] >= lo && at[j] < hi)
				(*dropped)++;
			else
				a[n++] = at[j];
		}
	}
	return n;
}

/*
 * Encode the @n increasing addresses @a into @w (at most @cap words):
 * its number of words, or SIZE_MAX if more would be needed.
 */
static size_t fi_relr_encode(const uint64_t *a, size_t n, uint64_t *w,
			     size_t cap)
{
	size_t nw = 0;

	for (size_t i = 0; i < n;) {
		uint64_t next;

		if (nw == cap)
			return SIZE_MAX;
		w[nw++] = a[i];
		next = a[i++] + 8;
		for (;;) {
			uint64_t map = 0;

			while (i < n && a[i] - next < FI_RELR_BITS * 8ull &&
			       !((a[i] - next) % 8)) {
				map |= 1ull << ((a[i] - next) / 8 + 1);
				i++;
			}
			if (!map)
				break;
			if (nw == cap)
				return SIZE_MAX;
			w[nw++] = map | 1;
			next += FI_RELR_BITS * 8ull;
		}
	}
	return nw;
}

/* Shrink the SHT_RELR section at @addr of @old bytes to @now in the file. */
static bool fi_relr_section_size(int fd, const Elf64_Shdr *sh, size_t shnum,
				 uint64_t shoff, uint64_t addr, uint64_t old,
				 uint64_t now)
{
	for (size_t i = 1; i < shnum; i++) {
		if (sh[i].sh_type != SHT_RELR || sh[i].sh_addr != addr ||
		    sh[i].sh_size != old)
			continue;
		if (!fi_relr_pwrite(fd, &now, sizeof(now), shoff +
				    i * sizeof(Elf64_Shdr) +
				    offsetof(Elf64_Shdr, sh_size)))
			return false;
	}
	return true;
}

int fi_relr_drop(int fd, uint64_t size, const Elf64_Shdr *sh, size_t shnum,
		 uint64_t lo, uint64_t len)
{
	uint64_t hi = lo + len, off, *w = NULL, *a = NULL, *nwv = NULL;
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	struct fi_relr_dyn d;
	size_t nw, n, dropped, nnew, most = 0;
	int ret = 0;

	if (!len || hi < lo || !fi_pread_full(fd, &eh, sizeof(eh), 0) ||
	    eh.e_type != ET_DYN || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    !eh.e_phnum || eh.e_phoff > size ||
	    (uint64_t)eh.e_phnum * sizeof(*ph) > size - eh.e_phoff)
		return 0;
	ph = malloc(eh.e_phnum * sizeof(*ph));
	if (!ph || !fi_pread_full(fd, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff) ||
	    !fi_relr_dynamic(fd, size, ph, eh.e_phnum, &d) ||
	    fi_relr_rela_writes(fd, size, ph, eh.e_phnum, &d, lo, hi))
		goto out;
	ret = 1;	/* no RELA record writes the range */
	if (!d.has_relr || !d.relrsz)
		goto out;
	ret = 0;
	off = fi_relr_offset(ph, eh.e_phnum, d.relr, d.relrsz, size);
	if ((d.relrent && d.relrent != 8) || d.relrsz % 8 || !off ||
	    !d.relrsz_at)
		goto out;
	nw = d.relrsz / 8;
	w = malloc(d.relrsz);
	nwv = calloc(nw, sizeof(*nwv));
	if (!w || !nwv || !fi_pread_full(fd, w, d.relrsz, off))
		goto out;
	for (size_t i = 0; i < nw; i++)
		most += w[i] & 1 ? (size_t)__builtin_popcountll(w[i]) - 1 : 1;
	a = malloc((most ? most : 1) * sizeof(*a));
	if (!a)
		goto out;
	n = fi_relr_decode(w, nw, lo, hi, a, &dropped);
	if (n == SIZE_MAX)
		goto out;
	if (!dropped) {
		ret = 1;	/* nothing of the range in the table */
		goto out;
	}
	nnew = fi_relr_encode(a, n, nwv, nw);
	if (nnew == SIZE_MAX)
		goto out;	/* would not fit: left as linked */
	/*
	 * The table, then its size: between the two writes the old size
	 * would name zero words (address 0, in the read-only first page: a
	 * module that fails to load, never one half relocated in silence).
	 */
	d.relrsz = nnew * 8;
	if (!fi_relr_pwrite(fd, nwv, nw * 8, off) ||
	    !fi_relr_pwrite(fd, &d.relrsz, sizeof(d.relrsz), d.relrsz_at) ||
	    !fi_relr_section_size(fd, sh, shnum, eh.e_shoff, d.relr, nw * 8,
				  d.relrsz))
		ret = -EIO;
	else
		ret = 1;
out:
	free(ph);
	free(w);
	free(a);
	free(nwv);
	return ret;
}
