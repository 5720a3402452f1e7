/* SPDX-License-Identifier: MIT */
/*
 * Symbols of a module the runtime read from memory only
 * (fi_image_from_index), loaded from its file the first time a report
 * asks for one (src/elf/symfile.c).
 */
#ifndef FI_SYMFILE_H
#define FI_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "image.h"

/*
 * The function symbols of lazy image @im, sorted and chosen as the file
 * reader chooses them (elf.c) in @syms and @n, both empty when the file cannot
 * be read or is no longer the module's (deleted, replaced). The first call
 * per image reads the file; the table is then read-only and kept for the
 * life of the process. Async-signal-safe: open/mmap/munmap only, no
 * allocation, no lock (a lookup racing the first load gets no symbols).
 */
void fi_symfile_get(const struct fi_image *im, const struct fi_sym **syms,
		    size_t *n);

/*
 * Is the ELF file @file (@size bytes) the one lazy image @im was loaded
 * from? Its program headers and every note segment (build ID, module
 * index) must read the same as the loaded module's. True for images that
 * are not lazy (nothing to compare).
 */
bool fi_symfile_same(const struct fi_image *im, const uint8_t *file,
		     size_t size);

#endif /* FI_SYMFILE_H */
