/* SPDX-License-Identifier: MIT */
/*
 * A loaded module read from memory only (src/elf/imgindex.c): its module
 * index (src/elf/index.h) and its program headers, never its file.
 */
#ifndef FI_IMGINDEX_H
#define FI_IMGINDEX_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"

/*
 * The descriptor of the module index among the PT_NOTE segments of the
 * module loaded at @bias with program headers @ph (@phnum), or NULL.
 * A descriptor whose ranges fineibt-cc did not fill is returned too:
 * fi_image_from_index refuses it.
 */
const uint32_t *fi_index_find(const Elf64_Phdr *ph, size_t phnum,
			      uint64_t bias);

/*
 * The module's RTLD_NEXT entry (crt/next.S) and its two GOT slots
 * (dlsym@GLIBC_2.2.5, dlvsym@GLIBC_2.2.5: libc's), from its RTLD_NEXT
 * note (src/elf/index.h). False when the module has none (not linked by
 * fineibt-cc, or before it had one), or the note is not what the linker
 * makes of crt/next.S: the entry not in executable text, a slot not in
 * the module's PT_GNU_RELRO (a -z norelro link: a writable call target,
 * refused).
 */
struct fi_next_note {
	const void *entry;
	void *const *slot[2];	/* dlsym, dlvsym */
};

bool fi_next_find(const Elf64_Phdr *ph, size_t phnum, uint64_t bias,
		  struct fi_next_note *n);

/*
 * Build @im for the module loaded at @bias from its program headers and
 * index @desc, and discover its sites from live memory. No file is read:
 * @im has no symbols (im->lazy_syms is set: reports read them from
 * @path when they need them), no type ids, no note. Returns 0 or -errno
 * with a one-line reason in @err.
 */
int fi_image_from_index(struct fi_image *im, const char *path, uint64_t bias,
			const Elf64_Phdr *ph, size_t phnum, const uint32_t *desc,
			char *err, size_t errlen);

/*
 * @im for the module loaded at @bias (program headers @ph, @phnum, index
 * @desc) with its sites taken from @rec (@len bytes: a struct
 * fi_cache_rec and its arrays, src/elf/cacheid.h) instead of discovered
 * from its text: what a process mapping an entry of the shared text
 * cache knows from the entry. Its views, trap list and thunks are read
 * as fi_image_from_index reads them (none of them from the text); its
 * preambles and call sites are in compiler form, with their recorded
 * arity (hashes unknown: 0). A record that carries the module's
 * registered arrays (regs_off) is counted, not read: only its header
 * (@rec, @len bytes at least), @im->rec_sites, no preamble nor call
 * site. Returns 0 or -errno (a record that does not
 * fit the module) with a one-line reason in @err.
 */
int fi_image_from_record(struct fi_image *im, const char *path, uint64_t bias,
			 const Elf64_Phdr *ph, size_t phnum, const uint32_t *desc,
			 const uint8_t *rec, size_t len, char *err, size_t errlen);

/*
 * Why discovery refused the index's list of thunk calls without a check
 * and scanned the text instead (an entry that is not such a call, out of
 * order, outside the text, or too many), or NULL: no list, or taken.
 */
const char *fi_image_tcall_list_bad(const struct fi_image *im);

/*
 * For a module without an index: could it be a kCFI module? Looks, in
 * memory, at the 16 bytes before the 32 lowest function entries of its
 * text that its unwind search table lists (.eh_frame_hdr: the first
 * entries of a sorted table, no symbol read). A module without that
 * table, or whose table lists fewer than 32 functions in the first 64
 * KiB of its text (a small module, objects built without unwind
 * tables), is also sampled as fi_live_exports_kcfi does. False when
 * none is a kCFI-family preamble (libc, the dynamic loader, libfineibt
 * itself). Never reads a file.
 */
bool fi_live_maybe_kcfi(const Elf64_Phdr *ph, size_t phnum, uint64_t bias);

/*
 * The same question asked of exported functions only: 16 that the
 * dynamic symbol table defines in the first 64 KiB of the text (or, if
 * it has fewer there, the 16 lowest-addressed ones). Every exported
 * function of a kCFI module has a preamble; walks the whole table (libc:
 * about 3,000 symbols) when the module is not one.
 */
bool fi_live_exports_kcfi(const Elf64_Phdr *ph, size_t phnum, uint64_t bias);

/*
 * `fineibt patch`, on the bytes @note (@size) of the .note.fineibt
 * section of a file it writes: the module's .fineibt record (@rec, @len
 * bytes: its mode and key, which the file alone has otherwise; all but
 * its counts) goes into the module index, marked FI_INDEX_PATCHED, so
 * that the runtime takes
 * the patched module from memory as it takes any other (src/elf/index.h).
 * An index that cannot hold it (version 1, not filled) is marked not
 * filled instead: the runtime then reads the file. Returns 1 (record
 * written), 0 (index unfilled) or -1 (no index).
 */
int fi_index_set_record(uint8_t *note, size_t size, const void *rec,
			size_t len);

#endif /* FI_IMGINDEX_H */
