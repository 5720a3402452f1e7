/* SPDX-License-Identifier: MIT */
/*
 * The report's DWARF readers (src/trap/dwinfo.c prototypes, src/trap/dwline.c
 * lines) on arbitrary debug sections. The input is
 *
 *   u64 addr, u32 len[6], then .debug_abbrev, .debug_str,
 *   .debug_str_offsets, .debug_addr, .debug_line, .debug_line_str of
 *   those lengths, and the rest is .debug_info
 *
 * (fuzz/seeds.py cuts seeds from the -g test programs); it is wrapped in
 * a minimal ELF so the readers run exactly as on a module's file. Every
 * lookup must return 0/-ENOENT/-EINVAL with a NUL-terminated result.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "report.h"

#define NSECT	7

static const char *const names[NSECT] = {
	".debug_abbrev", ".debug_str", ".debug_str_offsets", ".debug_addr",
	".debug_line", ".debug_line_str", ".debug_info",
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The ELF around the sections; NULL if the input is too short. */
static uint8_t *wrap(const uint8_t *data, size_t size, size_t *out_size)
{
	size_t len[NSECT], off = sizeof(Elf64_Ehdr), shstr, shoff, total;
	const uint8_t *p = data + 8 + 4 * (NSECT - 1);
	size_t left = size - 8 - 4 * (NSECT - 1);
	char strtab[160];
	size_t slen = 1;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	uint8_t *f;

	strtab[0] = '\0';
	for (int i = 0; i < NSECT - 1; i++) {
		len[i] = rd32(data + 8 + 4 * i);
		if (len[i] > left)
			len[i] = left;
		left -= len[i];
	}
	len[NSECT - 1] = left;
	total = off + (size - 8 - 4 * (NSECT - 1)) + sizeof(strtab);
	shoff = (total + 7) & ~(size_t)7;
	f = calloc(1, shoff + (NSECT + 2) * sizeof(Elf64_Shdr));
	if (!f)
		return NULL;
	eh = (Elf64_Ehdr *)f;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = NSECT + 2;
	eh->e_shstrndx = NSECT + 1;
	sh = (Elf64_Shdr *)(f + shoff);
	for (int i = 0; i < NSECT; i++) {
		sh[i + 1].sh_name = (uint32_t)slen;
		sh[i + 1].sh_type = SHT_PROGBITS;
		sh[i + 1].sh_offset = off;
		sh[i + 1].sh_size = len[i];
		memcpy(f + off, p, len[i]);
		p += len[i];
		off += len[i];
		memcpy(strtab + slen, names[i], strlen(names[i]) + 1);
		slen += strlen(names[i]) + 1;
	}
	memcpy(strtab + slen, ".shstrtab", 10);
	shstr = off;
	memcpy(f + shstr, strtab, sizeof(strtab));
	sh[NSECT + 1].sh_name = (uint32_t)slen;
	sh[NSECT + 1].sh_type = SHT_STRTAB;
	sh[NSECT + 1].sh_offset = shstr;
	sh[NSECT + 1].sh_size = slen + 10;
	*out_size = shoff + (NSECT + 2) * sizeof(Elf64_Shdr);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fi_image im = { 0 };
	char buf[FI_REPORT_PROTO], file[64];
	unsigned int line;
	uint64_t addr = 0;
	int ret;

	if (size < 8 + 4 * (NSECT - 1))
		return 0;
	for (int i = 0; i < 8; i++)
		addr |= (uint64_t)data[i] << (8 * i);
	im.file = wrap(data, size, &im.file_size);
	if (!im.file)
		return 0;
	ret = fi_dwarf_proto(&im, addr, buf, sizeof(buf));
	if ((ret && ret != -ENOENT && ret != -EINVAL) ||
	    !memchr(buf, 0, sizeof(buf)) || (ret && buf[0]))
		abort();
	ret = fi_dwarf_line(&im, addr, file, sizeof(file), &line);
	if ((ret && ret != -ENOENT && ret != -EINVAL) ||
	    !memchr(file, 0, sizeof(file)))
		abort();
	free(im.file);
	return 0;
}
