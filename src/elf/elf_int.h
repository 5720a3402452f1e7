/* SPDX-License-Identifier: MIT */
/*
 * Private state shared by the ELF reader (elf.c: headers, tables,
 * symbols, relocations), site discovery (elf_sites.c), the memory-only
 * reader (imgindex.c), lazy symbols (symfile.c), the views (view.c) and
 * the sorted arrays (sort.c).
 */
#ifndef FI_ELF_INT_H
#define FI_ELF_INT_H

#include <elf.h>

#include "image.h"
#include "sort.h"

/* One PT_LOAD as the file describes it (parallel to im->views). */
struct fi_seg {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t filesz;
	uint64_t offset;
	uint32_t flags;
};

struct fi_elf {
	struct fi_seg *segs;		/* im->nviews of them */

	Elf64_Shdr *shdrs;		/* copied out of the file (alignment) */
	size_t shnum;
	const char *shstr;		/* section names, NUL-terminated table */
	size_t shstr_size;

	/* __patchable_function_entries, relocated: func - 11, sorted. */
	uint64_t *entries;
	size_t nentries;
	/*
	 * Or, for an image read from memory (fi_image_from_index), the
	 * section itself where the loader relocated it: @npfe run-time
	 * values, in any order, 0 (or the bias) for a discarded function.
	 * Discovery reads it once; no sorted copy is made.
	 */
	const uint8_t *pfe;
	size_t npfe;
	/* Its values are link-time (FI_INDEX_PFE_LINK): 0 if discarded. */
	bool pfe_linked;
	/* The module index says there is no thunk call without a check. */
	bool no_tcalls;
	/*
	 * Or lists them (has_tcall_list): @ntcall_list offsets (as the index
	 * holds them, unchecked: FI_INDEX_TCALLS_MAX at most are read) from
	 * the link-time address @tcall_base of its descriptor. Discovery
	 * validates every entry; tcall_list_bad says why it scanned instead.
	 */
	bool has_tcall_list;
	const int32_t *tcall_list;
	size_t ntcall_list;
	uint64_t tcall_base;
	const char *tcall_list_bad;

	/* The symbols came from .symtab (not stripped): __cfi_ names known. */
	bool has_symtab;
	/* Addresses of __cfi_<name> symbols (= func - 16), sorted. */
	uint64_t *cfi;
	size_t ncfi;

	/* Executable sections that hold linker stubs (.plt*, .iplt). */
	uint64_t stub_lo[4], stub_hi[4];
	size_t nstubs;

	/*
	 * fi_image_open_live: the kept symbol and type-id names, copied out
	 * of the file (which is not kept); NULL for the other images.
	 */
	char *names;
};

/* [off, off + len) lies inside [0, size), without overflow. */
static inline bool fi_in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/*
 * Trap @i of @im (fi_image_trap), inline for the loops over every trap
 * (discovery, the index's order check): a copy, or an entry of the live
 * .kcfi_traps, relative to its own address.
 */
static inline uint64_t fi_trap_at(const struct fi_image *im, size_t i)
{
	const uint8_t *e;
	int32_t rel;

	if (!im->ktraps)
		return im->traps[i];
	e = im->ktraps + i * 4;
	__builtin_memcpy(&rel, e, sizeof(rel));	/* .kcfi_traps is byte-aligned */
	return (uint64_t)(uintptr_t)e + (uint64_t)(int64_t)rel - im->bias;
}


/*
 * (Re)discover every site from the image's views and the metadata read
 * from the file. Called by fi_image_from_buffer and fi_image_attach_live.
 */
int fi_elf_discover(struct fi_image *im);
void fi_elf_free_sites(struct fi_image *im);

#endif /* FI_ELF_INT_H */
