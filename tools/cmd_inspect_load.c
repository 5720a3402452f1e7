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

/* The section headers of the file, or NULL (checked against its size). */
static const Elf64_Shdr *insp_shdrs(const struct fi_image *im, size_t *n)
{
	const Elf64_Ehdr *eh = (const void *)im->file;

	*n = 0;
	if (!im->file || im->file_size < sizeof(*eh) ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shoff ||
	    eh->e_shoff > im->file_size ||
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

/*
 * Where a relocation stores naked entry @addr: in .init_array,
 * .fini_array or .preinit_array (libc calls it, from no CFI site), other
 * data, or nowhere a relocation says (code may still take its address:
 * a RIP-relative lea needs none).
 */
const char *insp_naked_origin(const struct fi_image *im, uint64_t addr)
{
	static const struct { uint32_t type; const char *say; } arrays[] = {
		{ SHT_INIT_ARRAY, "in .init_array: libc calls it at start-up" },
		{ SHT_FINI_ARRAY, "in .fini_array: libc calls it at exit" },
		{ SHT_PREINIT_ARRAY, "in .preinit_array: the loader calls it" },
	};
	const char *found = NULL;
	size_t n;
	const Elf64_Shdr *sh = insp_shdrs(im, &n);

	for (size_t i = 0; i < n; i++) {
		const Elf64_Rela *r;
		size_t nr;

		if (sh[i].sh_type != SHT_RELA || sh[i].sh_entsize != sizeof(*r) ||
		    !insp_in_file(im, &sh[i]))
			continue;
		r = (const void *)(im->file + sh[i].sh_offset);
		nr = sh[i].sh_size / sizeof(*r);
		for (size_t k = 0; k < nr; k++) {
			if (ELF64_R_TYPE(r[k].r_info) != R_X86_64_RELATIVE ||
			    (uint64_t)r[k].r_addend != addr)
				continue;
			found = "its address is in data (a relocation stores it)";
			for (size_t s = 0; s < n; s++) {
				for (size_t a = 0; a < 3; a++) {
					if (sh[s].sh_type == arrays[a].type &&
					    r[k].r_offset >= sh[s].sh_addr &&
					    r[k].r_offset < sh[s].sh_addr + sh[s].sh_size)
						return arrays[a].say;
				}
			}
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
