/* SPDX-License-Identifier: MIT */
/*
 * fineibt inspect: what a file becomes when it loads, besides what it is
 * on disk. A fineibt-cc program carries the runtime, which rewrites its
 * kCFI sites before main into FINEIBT_CFI's mode (default auto); a plain
 * kCFI file stays as compiled unless started with `fineibt run`; a file
 * `fineibt patch` rewrote keeps its mode. And whether each naked ENDBR
 * (an entry with ENDBR and no hash check) matters in that mode, with
 * where its address is stored when a relocation tells (docs/inspect.md).
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "fineibt.h"
#include "image.h"
#include "cli.h"

/*
 * The section headers of the file, or NULL (checked against its size; a
 * table off its alignment, which no linker writes, counts as none).
 */
static const Elf64_Shdr *insp_shdrs(const struct fi_image *im, size_t *n)
{
	const Elf64_Ehdr *eh = (const void *)im->file;

	*n = 0;
	if (!im->file || im->file_size < sizeof(*eh) ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shoff ||
	    eh->e_shoff % _Alignof(Elf64_Shdr) || eh->e_shoff > im->file_size ||
	    eh->e_shnum > (im->file_size - eh->e_shoff) / sizeof(Elf64_Shdr))
		return NULL;
	*n = eh->e_shnum;
	return (const void *)(im->file + eh->e_shoff);
}

static bool insp_in_file(const struct fi_image *im, const Elf64_Shdr *s)
{
	return s->sh_type != SHT_NOBITS && s->sh_offset <= im->file_size &&
	       s->sh_size <= im->file_size - s->sh_offset;
}

/* Does an allocated string table of the file hold the string @name? */
static bool insp_dynstr_has(const struct fi_image *im, const char *name)
{
	size_t n, len = strlen(name);
	const Elf64_Shdr *sh = insp_shdrs(im, &n);

	for (size_t i = 0; i < n; i++) {
		const char *p, *end;

		if (sh[i].sh_type != SHT_STRTAB || !(sh[i].sh_flags & SHF_ALLOC) ||
		    !insp_in_file(im, &sh[i]))
			continue;
		p = (const char *)im->file + sh[i].sh_offset;
		end = p + sh[i].sh_size;
		for (; p < end; p += strnlen(p, (size_t)(end - p)) + 1) {
			if ((size_t)(end - p) > len && !memcmp(p, name, len + 1))
				return true;
		}
	}
	return false;
}

/* fineibt-cc's crt hook calls the runtime: the file carries it. */
bool insp_has_runtime(const struct fi_image *im)
{
	return insp_dynstr_has(im, "fineibt_rt_hook");
}

/* What auto resolves to on this machine, as a cfi= list. */
static void insp_auto(char *buf, size_t len)
{
	struct fineibt_config cfg = { .mode = FINEIBT_MODE_AUTO,
				      .flags = FINEIBT_F_RAND };

	fineibt_resolve_auto(&cfg);
	cli_mode_str(&cfg, buf, len);
}

/* The mode the file's code runs in once loaded; false when unknown. */
bool insp_load_cfg(const struct fi_image *im, struct fineibt_config *cfg)
{
	if (im->note.present) {
		*cfg = im->note.cfg;
		return true;
	}
	if (fi_image_mode(im, cfg) < 0)
		return false;
	if (!insp_has_runtime(im))
		return true;
	cfg->mode = FINEIBT_MODE_AUTO;
	cfg->flags = FINEIBT_F_RAND;
	fineibt_resolve_auto(cfg);
	return true;
}

void insp_load_str(const struct fi_image *im, char *buf, size_t len)
{
	char m[128];

	insp_auto(m, sizeof(m));
	if (im->note.present) {
		cli_mode_str(&im->note.cfg, m, sizeof(m));
		snprintf(buf, len, "stays %s (patched statically)", m);
	} else if (!fi_image_is_kcfi_mode(im)) {
		buf[0] = '\0';
	} else if (insp_has_runtime(im)) {
		snprintf(buf, len, "FINEIBT_CFI, unset: auto -> %s (the runtime "
			 "linked in rewrites it before main)", m);
	} else {
		snprintf(buf, len, "kcfi as compiled; 'fineibt run' rewrites it "
			 "into FINEIBT_CFI's mode (unset: auto -> %s)", m);
	}
}

#ifndef SHT_RELR
#define SHT_RELR	19
#endif

/* What says which of the start-up/exit arrays holds place @at, or NULL. */
static const char *insp_array_of(const Elf64_Shdr *sh, size_t n, uint64_t at)
{
	static const struct { uint32_t type; const char *say; } arrays[] = {
		{ SHT_INIT_ARRAY, "in .init_array: libc calls it at start-up" },
		{ SHT_FINI_ARRAY, "in .fini_array: libc calls it at exit" },
		{ SHT_PREINIT_ARRAY, "in .preinit_array: the loader calls it" },
	};

	for (size_t s = 0; s < n; s++) {
		for (size_t a = 0; a < 3; a++) {
			if (sh[s].sh_type == arrays[a].type && at >= sh[s].sh_addr &&
			    at < sh[s].sh_addr + sh[s].sh_size)
				return arrays[a].say;
		}
	}
	return NULL;
}

/* The 8 bytes the file holds at link-time address @at (a RELR place keeps
 * its value there); false when no section of the file has them. */
static bool insp_word_at(const struct fi_image *im, const Elf64_Shdr *sh,
			 size_t n, uint64_t at, uint64_t *v)
{
	for (size_t s = 0; s < n; s++) {
		if (!(sh[s].sh_flags & SHF_ALLOC) || !insp_in_file(im, &sh[s]) ||
		    at < sh[s].sh_addr || sh[s].sh_size < 8 ||
		    at - sh[s].sh_addr > sh[s].sh_size - 8)
			continue;
		memcpy(v, im->file + sh[s].sh_offset + (at - sh[s].sh_addr), 8);
		return true;
	}
	return false;
}

/* Place @at, relocated relative, gets @addr: where is that? */
static const char *insp_place(const struct fi_image *im, const Elf64_Shdr *sh,
			      size_t n, uint64_t at, uint64_t addr,
			      const char **found)
{
	uint64_t v;

	if (!insp_word_at(im, sh, n, at, &v) || v != addr)
		return NULL;
	*found = "its address is in data (a relocation stores it)";
	return insp_array_of(sh, n, at);
}

/*
 * Where a relocation stores naked entry @addr: in .init_array,
 * .fini_array or .preinit_array (libc calls it, from no CFI site), other
 * data, or nowhere a relocation says (code may still take its address:
 * a RIP-relative lea needs none). RELA records carry the value; a RELR
 * table (fineibt-cc links with -z pack-relative-relocs) names places
 * whose value the file holds in place.
 */
const char *insp_naked_origin(const struct fi_image *im, uint64_t addr)
{
	const char *found = NULL, *say;
	size_t n;
	const Elf64_Shdr *sh = insp_shdrs(im, &n);

	for (size_t i = 0; i < n; i++) {
		const unsigned char *at;
		Elf64_Rela r;
		uint64_t base = 0;
		size_t nr;

		if (!insp_in_file(im, &sh[i]))
			continue;
		if (sh[i].sh_type == SHT_RELR && sh[i].sh_entsize == 8) {
			at = im->file + sh[i].sh_offset;
			nr = sh[i].sh_size / 8;
			for (size_t k = 0; k < nr; k++) {
				uint64_t wk;

				/* a malformed file may place a table off its
				 * alignment: its entries are copied out */
				memcpy(&wk, at + k * 8, sizeof(wk));
				if (!(wk & 1)) {
					base = wk;
					say = insp_place(im, sh, n, base, addr, &found);
					if (say)
						return say;
					base += 8;
					continue;
				}
				for (unsigned int b = 1; b < 64; b++) {
					if (!(wk >> b & 1))
						continue;
					say = insp_place(im, sh, n, base + (b - 1) * 8ull,
							 addr, &found);
					if (say)
						return say;
				}
				base += 63 * 8;
			}
			continue;
		}
		if (sh[i].sh_type != SHT_RELA || sh[i].sh_entsize != sizeof(r))
			continue;
		at = im->file + sh[i].sh_offset;
		nr = sh[i].sh_size / sizeof(r);
		for (size_t k = 0; k < nr; k++) {
			memcpy(&r, at + k * sizeof(r), sizeof(r));
			if (ELF64_R_TYPE(r.r_info) != R_X86_64_RELATIVE ||
			    (uint64_t)r.r_addend != addr)
				continue;
			found = "its address is in data (a relocation stores it)";
			say = insp_array_of(sh, n, r.r_offset);
			if (say)
				return say;
		}
	}
	return found;
}

/* Whether a naked ENDBR is a landing pad for an indirect call in @cfg. */
bool insp_naked_matters(const struct fineibt_config *cfg)
{
	return cfg->mode == FINEIBT_MODE_FINEIBT &&
	       !(cfg->flags & FINEIBT_F_PARANOID);
}

void insp_naked_verdict(const struct fineibt_config *cfg, char *buf, size_t len)
{
	char m[128];

	cli_mode_str(cfg, m, sizeof(m));
	if (cfg->mode == FINEIBT_MODE_OFF)
		snprintf(buf, len, "at load (%s) no call is checked at all", m);
	else if (insp_naked_matters(cfg))
		snprintf(buf, len, "at load (%s) each is a landing pad for any "
			 "indirect call: no caller check, no hardware IBT; "
			 "add paranoid", m);
	else
		snprintf(buf, len, "at load (%s) none is the target of a checked "
			 "call: the caller checks the hash, which a naked "
			 "ENDBR lacks", m);
}
