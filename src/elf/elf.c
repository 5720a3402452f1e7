/* SPDX-License-Identifier: MIT */
/*
 * Reading ELF64 x86-64 executables and shared objects into a struct
 * fi_image: PT_LOAD views, section table, symbols, the kCFI metadata
 * (__patchable_function_entries with its relocations, .kcfi_traps) and
 * the .fineibt note. Site discovery proper lives in elf_sites.c.
 *
 * The input is untrusted: every offset, size, count and string index is
 * checked against the file before use (fi_in_bounds never overflows), and
 * every allocation is bounded by the size of the file. A bad file gets
 * -errno and a one-line reason, never a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_int.h"
#include "symfile.h"
#include "note.h"
#include "strbuf.h"

#ifndef SHT_RELR
#define SHT_RELR	19
#endif

/* Larger inputs are refused rather than read into memory whole. */
#define FI_MAX_FILE	(1ull << 30)

#define TYPEID_PREFIX	"__kcfi_typeid_"
#define CFI_PREFIX	"__cfi_"
#define THUNK_PREFIX	"__x86_indirect_thunk_"

/* One parse: the input, and where the first error goes. */
struct fi_rd {
	struct fi_image *im;
	struct fi_elf *elf;
	const uint8_t *buf;
	size_t size;
	Elf64_Ehdr eh;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int fi_fail(struct fi_rd *rd, int code, const char *fmt, ...)
{
	va_list ap;

	if (rd->err && rd->errlen) {
		va_start(ap, fmt);
		vsnprintf(rd->err, rd->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* --------------------------------------------------------- the header */

static int fi_read_ehdr(struct fi_rd *rd)
{
	Elf64_Ehdr *eh = &rd->eh;

	if (rd->size == 0)
		return fi_fail(rd, -ENOEXEC, "empty file");
	if (rd->size < SELFMAG || memcmp(rd->buf, ELFMAG, SELFMAG))
		return fi_fail(rd, -ENOEXEC, "not an ELF file");
	if (rd->size < EI_NIDENT + 1 || rd->buf[EI_CLASS] != ELFCLASS64)
		return fi_fail(rd, -ENOEXEC, "not a 64-bit ELF file");
	if (rd->buf[EI_DATA] != ELFDATA2LSB)
		return fi_fail(rd, -ENOEXEC, "not a little-endian ELF file");
	if (rd->size < sizeof(*eh))
		return fi_fail(rd, -ENOEXEC, "truncated ELF header");
	memcpy(eh, rd->buf, sizeof(*eh));
	if (eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return fi_fail(rd, -ENOEXEC, "unknown ELF version");
	if (eh->e_machine != EM_X86_64)
		return fi_fail(rd, -ENOEXEC, "not an x86-64 ELF file (machine %u)",
			       eh->e_machine);
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return fi_fail(rd, -ENOEXEC,
			       "not an executable or shared object (ELF type %u)",
			       eh->e_type);
	if (eh->e_ehsize < sizeof(*eh))
		return fi_fail(rd, -ENOEXEC, "bad ELF header size %u", eh->e_ehsize);
	rd->im->e_type = eh->e_type;
	return 0;
}

/* ------------------------------------------------------------- views */

static int fi_cmp_seg(const void *a, const void *b)
{
	const struct fi_seg *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Sort the segments, refuse overlaps, and make one view per segment. */
static int fi_make_views(struct fi_rd *rd)
{
	struct fi_image *im = rd->im;
	struct fi_seg *segs = rd->elf->segs;
	bool exec = false;

	qsort(segs, im->nviews, sizeof(*segs), fi_cmp_seg);
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_seg *s = &segs[i];

		if (i && s->vaddr < segs[i - 1].vaddr + segs[i - 1].memsz)
			return fi_fail(rd, -ENOEXEC, "PT_LOAD segments overlap at %#llx",
				       (unsigned long long)s->vaddr);
		im->views[i] = (struct fi_view){
			.vaddr = s->vaddr, .size = s->filesz,
			.mem = (uint8_t *)rd->buf + s->offset,
			.exec = s->flags & PF_X,
		};
		if (im->views[i].exec && s->filesz)
			exec = true;
	}
	if (!exec)
		return fi_fail(rd, -ENOEXEC, "no executable segment");
	return 0;
}

static int fi_read_seg(struct fi_rd *rd, const Elf64_Phdr *ph)
{
	if (!fi_in_bounds(ph->p_offset, ph->p_filesz, rd->size))
		return fi_fail(rd, -ENOEXEC, "PT_LOAD segment past end of file");
	if (ph->p_filesz > ph->p_memsz)
		return fi_fail(rd, -ENOEXEC, "PT_LOAD file size exceeds memory size");
	if (ph->p_vaddr + ph->p_memsz < ph->p_vaddr)
		return fi_fail(rd, -ENOEXEC, "PT_LOAD segment wraps the address space");
	rd->elf->segs[rd->im->nviews++] = (struct fi_seg){
		.vaddr = ph->p_vaddr, .memsz = ph->p_memsz,
		.filesz = ph->p_filesz, .offset = ph->p_offset,
		.flags = ph->p_flags,
	};
	return 0;
}

static int fi_read_phdrs(struct fi_rd *rd)
{
	const Elf64_Ehdr *eh = &rd->eh;
	struct fi_image *im = rd->im;
	size_t n = eh->e_phnum;
	int ret;

	if (n == PN_XNUM)
		return fi_fail(rd, -ENOEXEC, "extended program header count not supported");
	if (n == 0)
		return fi_fail(rd, -ENOEXEC, "no program headers");
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return fi_fail(rd, -ENOEXEC, "bad program header size %u", eh->e_phentsize);
	if (!fi_in_bounds(eh->e_phoff, n * sizeof(Elf64_Phdr), rd->size))
		return fi_fail(rd, -ENOEXEC, "program header table past end of file");
	if (eh->e_phoff < sizeof(*eh))
		return fi_fail(rd, -ENOEXEC, "program header table overlaps the ELF header");
	im->views = calloc(n, sizeof(*im->views));
	rd->elf->segs = calloc(n, sizeof(*rd->elf->segs));
	if (!im->views || !rd->elf->segs)
		return fi_fail(rd, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, rd->buf + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_INTERP)
			im->interp = true;
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		ret = fi_read_seg(rd, &ph);
		if (ret)
			return ret;
	}
	return fi_make_views(rd);
}

/* ---------------------------------------------------------- sections */

/* Two byte ranges of the file overlap. */
static bool fi_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* Section count and name-table index, following ELF extended numbering. */
static int fi_shdr_counts(struct fi_rd *rd, size_t *shnum, size_t *shstrndx)
{
	const Elf64_Ehdr *eh = &rd->eh;
	Elf64_Shdr sh0;

	*shnum = eh->e_shnum;
	*shstrndx = eh->e_shstrndx;
	if (eh->e_shnum && *shstrndx != SHN_XINDEX)
		return 0;
	if (!fi_in_bounds(eh->e_shoff, sizeof(sh0), rd->size))
		return fi_fail(rd, -ENOEXEC, "section header table past end of file");
	memcpy(&sh0, rd->buf + eh->e_shoff, sizeof(sh0));
	if (!eh->e_shnum)
		*shnum = sh0.sh_size;
	if (*shstrndx == SHN_XINDEX)
		*shstrndx = sh0.sh_link;
	return 0;
}

static int fi_check_shdr_table(struct fi_rd *rd, size_t shnum)
{
	const Elf64_Ehdr *eh = &rd->eh;
	uint64_t len;

	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return fi_fail(rd, -ENOEXEC, "bad section header size %u", eh->e_shentsize);
	if (shnum > rd->size / sizeof(Elf64_Shdr))
		return fi_fail(rd, -ENOEXEC, "section header count %zu too large", shnum);
	len = shnum * sizeof(Elf64_Shdr);
	if (!fi_in_bounds(eh->e_shoff, len, rd->size))
		return fi_fail(rd, -ENOEXEC, "section header table past end of file");
	if (fi_overlap(eh->e_shoff, len, 0, sizeof(*eh)))
		return fi_fail(rd, -ENOEXEC, "section header table overlaps the ELF header");
	if (fi_overlap(eh->e_shoff, len, eh->e_phoff,
		       (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return fi_fail(rd, -ENOEXEC,
			       "section header table overlaps the program header table");
	return 0;
}

static int fi_check_section(struct fi_rd *rd, size_t i)
{
	const Elf64_Shdr *sh = &rd->elf->shdrs[i];
	const Elf64_Ehdr *eh = &rd->eh;
	const char *name;

	if (i == 0)
		return 0;
	if (rd->elf->shstr && sh->sh_name >= rd->elf->shstr_size)
		return fi_fail(rd, -ENOEXEC, "section %zu name out of range", i);
	name = rd->elf->shstr ? rd->elf->shstr + sh->sh_name : "";
	if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL)
		return 0;
	if (!fi_in_bounds(sh->sh_offset, sh->sh_size, rd->size))
		return fi_fail(rd, -ENOEXEC, "section %zu (%.64s) past end of file", i, name);
	if (fi_overlap(sh->sh_offset, sh->sh_size, eh->e_shoff,
		       rd->elf->shnum * sizeof(Elf64_Shdr)))
		return fi_fail(rd, -ENOEXEC,
			       "section %zu (%.64s) overlaps the section header table", i, name);
	return 0;
}

/* A string table section @i: in the file, NUL-terminated. */
static int fi_strtab(struct fi_rd *rd, size_t i, const char **tab, size_t *size)
{
	const Elf64_Shdr *sh;

	if (i == 0 || i >= rd->elf->shnum)
		return fi_fail(rd, -ENOEXEC, "string table index %zu out of range", i);
	sh = &rd->elf->shdrs[i];
	if (sh->sh_type != SHT_STRTAB)
		return fi_fail(rd, -ENOEXEC, "section %zu is not a string table", i);
	if (!fi_in_bounds(sh->sh_offset, sh->sh_size, rd->size))
		return fi_fail(rd, -ENOEXEC, "string table %zu past end of file", i);
	if (sh->sh_size == 0 || rd->buf[sh->sh_offset + sh->sh_size - 1])
		return fi_fail(rd, -ENOEXEC, "string table %zu not NUL-terminated", i);
	*tab = (const char *)rd->buf + sh->sh_offset;
	*size = sh->sh_size;
	return 0;
}

static int fi_read_shdrs(struct fi_rd *rd)
{
	struct fi_elf *elf = rd->elf;
	size_t shnum, shstrndx;
	int ret;

	if (rd->eh.e_shoff == 0)
		return 0;	/* no section table: nothing to discover */
	ret = fi_shdr_counts(rd, &shnum, &shstrndx);
	if (!ret)
		ret = fi_check_shdr_table(rd, shnum);
	if (ret)
		return ret;
	elf->shdrs = calloc(shnum ? shnum : 1, sizeof(*elf->shdrs));
	if (!elf->shdrs)
		return fi_fail(rd, -ENOMEM, "out of memory");
	memcpy(elf->shdrs, rd->buf + rd->eh.e_shoff, shnum * sizeof(Elf64_Shdr));
	elf->shnum = shnum;
	if (shstrndx != SHN_UNDEF) {
		if (shstrndx >= shnum)
			return fi_fail(rd, -ENOEXEC,
				       "section name table index %zu out of range", shstrndx);
		ret = fi_strtab(rd, shstrndx, &elf->shstr, &elf->shstr_size);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < shnum; i++) {
		ret = fi_check_section(rd, i);
		if (ret)
			return ret;
	}
	return 0;
}

static const char *fi_sec_name(const struct fi_elf *elf, const Elf64_Shdr *sh)
{
	return elf->shstr ? elf->shstr + sh->sh_name : "";
}

static const uint8_t *fi_sec_data(const struct fi_rd *rd, const Elf64_Shdr *sh)
{
	return rd->buf + sh->sh_offset;	/* bounds checked by fi_read_shdrs */
}

/* Executable sections holding linker stubs: PLT entries are no functions. */
static void fi_note_stub_sections(struct fi_rd *rd)
{
	struct fi_elf *elf = rd->elf;

	for (size_t i = 1; i < elf->shnum && elf->nstubs < 4; i++) {
		const Elf64_Shdr *sh = &elf->shdrs[i];
		const char *name = fi_sec_name(elf, sh);

		if (!(sh->sh_flags & SHF_EXECINSTR))
			continue;
		if (strncmp(name, ".plt", 4) && strcmp(name, ".iplt"))
			continue;
		elf->stub_lo[elf->nstubs] = sh->sh_addr;
		elf->stub_hi[elf->nstubs++] = sh->sh_addr + sh->sh_size;
	}
}

/* ----------------------------------------------------------- symbols */

/* The symbol table to use: .symtab if present, else .dynsym; 0 if none. */
static size_t fi_pick_symtab(const struct fi_elf *elf)
{
	size_t dyn = 0;

	for (size_t i = 1; i < elf->shnum; i++) {
		if (elf->shdrs[i].sh_type == SHT_SYMTAB)
			return i;
		if (elf->shdrs[i].sh_type == SHT_DYNSYM && !dyn)
			dyn = i;
	}
	return dyn;
}

/* Check symbol table @i and its strings; @n gets the symbol count. */
static int fi_symtab(struct fi_rd *rd, size_t i, size_t *n,
		     const char **str, size_t *strsize)
{
	const Elf64_Shdr *sh = &rd->elf->shdrs[i];

	if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_size % sizeof(Elf64_Sym))
		return fi_fail(rd, -ENOEXEC, "symbol table %zu has a bad entry size", i);
	if (sh->sh_link == i)
		return fi_fail(rd, -ENOEXEC, "symbol table %zu links to itself", i);
	*n = sh->sh_size / sizeof(Elf64_Sym);
	return fi_strtab(rd, sh->sh_link, str, strsize);
}

static void fi_get_sym(const struct fi_rd *rd, const Elf64_Shdr *sh, size_t k,
		       Elf64_Sym *sym)
{
	memcpy(sym, fi_sec_data(rd, sh) + k * sizeof(*sym), sizeof(*sym));
}

static int fi_thunk_reg(const char *reg)
{
	static const char *const names[16] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	};

	for (int r = 0; r < 16; r++) {
		if (!strcmp(reg, names[r]))
			return r;
	}
	return -1;
}

/* Inline: called for every "__" symbol, where strncmp's call dominated. */
static bool fi_starts(const char *s, const char *prefix)
{
	while (*prefix) {
		if (*s++ != *prefix++)
			return false;
	}
	return true;
}

/* Sort by address; at one address a sized symbol first, then by name. */
static int fi_sym_rank(const struct fi_sym *s)
{
	return s->size ? 0 : 1;
}

static int fi_cmp_sym(const void *a, const void *b)
{
	const struct fi_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (fi_sym_rank(x) != fi_sym_rank(y))
		return fi_sym_rank(x) - fi_sym_rank(y);
	return strcmp(x->name, y->name);
}

/* Record the special symbols; returns true for a plain function symbol. */
static bool fi_special_sym(struct fi_rd *rd, const Elf64_Sym *sym,
			   const char *name)
{
	struct fi_image *im = rd->im;
	int type = ELF64_ST_TYPE(sym->st_info);
	bool func = (type == STT_FUNC || type == STT_GNU_IFUNC) &&
		    sym->st_shndx != SHN_UNDEF && sym->st_value;

	/* Every special name starts with "__": most symbols stop here. */
	if (name[0] != '_' || name[1] != '_')
		return func;
	if (fi_starts(name, TYPEID_PREFIX) && name[strlen(TYPEID_PREFIX)]) {
		im->typeids[im->ntypeids++] = (struct fi_typeid){
			.name = name + strlen(TYPEID_PREFIX),
			.hash = (uint32_t)sym->st_value,
		};
		return false;
	}
	if (!strcmp(name, "__bhi_args") && sym->st_shndx != SHN_UNDEF) {
		im->bhi_args = sym->st_value;
		return false;
	}
	if (!func)
		return false;
	if (fi_starts(name, CFI_PREFIX)) {
		rd->elf->cfi[rd->elf->ncfi++] = sym->st_value;
		return false;
	}
	if (fi_starts(name, THUNK_PREFIX)) {
		int reg = fi_thunk_reg(name + strlen(THUNK_PREFIX));

		if (reg >= 0)
			im->thunks[reg] = sym->st_value;
	}
	return true;
}

static int fi_alloc_syms(struct fi_rd *rd, size_t n)
{
	struct fi_image *im = rd->im;

	im->syms = calloc(n ? n : 1, sizeof(*im->syms));
	im->typeids = calloc(n ? n : 1, sizeof(*im->typeids));
	rd->elf->cfi = calloc(n ? n : 1, sizeof(*rd->elf->cfi));
	if (!im->syms || !im->typeids || !rd->elf->cfi)
		return fi_fail(rd, -ENOMEM, "out of memory");
	return 0;
}

/*
 * One symbol per address: the one fi_cmp_sym puts first (sized, then by
 * name; among equals the first in the table). @s is sorted by address,
 * stably, so this is what a stable sort by fi_cmp_sym would keep.
 */
static size_t fi_dedup_syms(struct fi_sym *s, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && s[out - 1].addr == s[i].addr) {
			if (fi_cmp_sym(&s[i], &s[out - 1]) < 0)
				s[out - 1] = s[i];
			continue;
		}
		s[out++] = s[i];
	}
	return out;
}

static int fi_read_symbols(struct fi_rd *rd)
{
	struct fi_image *im = rd->im;
	size_t idx = fi_pick_symtab(rd->elf), n, strsize;
	const char *str;
	int ret;

	if (!idx)
		return fi_alloc_syms(rd, 0);
	rd->elf->has_symtab = rd->elf->shdrs[idx].sh_type == SHT_SYMTAB;
	ret = fi_symtab(rd, idx, &n, &str, &strsize);
	if (!ret)
		ret = fi_alloc_syms(rd, n);
	if (ret)
		return ret;
	for (size_t k = 1; k < n; k++) {
		Elf64_Sym sym;
		const char *name;

		fi_get_sym(rd, &rd->elf->shdrs[idx], k, &sym);
		if (sym.st_name >= strsize)
			return fi_fail(rd, -ENOEXEC, "symbol %zu name out of range", k);
		name = str + sym.st_name;
		if (!*name || !fi_special_sym(rd, &sym, name))
			continue;
		im->syms[im->nsyms++] = (struct fi_sym){
			.addr = sym.st_value, .size = sym.st_size, .name = name,
		};
	}
	if (fi_sort_by_addr(im->syms, im->nsyms, sizeof(*im->syms)))
		qsort(im->syms, im->nsyms, sizeof(*im->syms), fi_cmp_sym);
	im->nsyms = fi_dedup_syms(im->syms, im->nsyms);
	fi_sort_u64(rd->elf->cfi, rd->elf->ncfi);
	rd->elf->ncfi = fi_dedup_u64(rd->elf->cfi, rd->elf->ncfi);
	return 0;
}

/* ------------------------------------------- patchable function entries */

/* The __patchable_function_entries sections, their values being built. */
struct fi_pfe {
	size_t nsec;
	const Elf64_Shdr *sec[8];
	size_t first[8];	/* index of each section's first value */
	uint64_t *val;
	size_t n;
};

static bool fi_is_pfe(const struct fi_elf *elf, const Elf64_Shdr *sh)
{
	return sh->sh_type == SHT_PROGBITS &&
	       !strcmp(fi_sec_name(elf, sh), "__patchable_function_entries");
}

static int fi_pfe_collect(struct fi_rd *rd, struct fi_pfe *p)
{
	const struct fi_elf *elf = rd->elf;
	size_t total = 0;

	for (size_t i = 1; i < elf->shnum; i++) {
		const Elf64_Shdr *sh = &elf->shdrs[i];

		if (!fi_is_pfe(elf, sh))
			continue;
		if (sh->sh_size % 8)
			return fi_fail(rd, -ENOEXEC,
				       "__patchable_function_entries size not a multiple of 8");
		if (p->nsec == 8)
			return fi_fail(rd, -ENOEXEC,
				       "too many __patchable_function_entries sections");
		p->first[p->nsec] = total;
		p->sec[p->nsec++] = sh;
		total += sh->sh_size / 8;
	}
	p->val = calloc(total ? total : 1, sizeof(*p->val));
	if (!p->val)
		return fi_fail(rd, -ENOMEM, "out of memory");
	for (size_t s = 0; s < p->nsec; s++)
		memcpy(p->val + p->first[s], fi_sec_data(rd, p->sec[s]),
		       p->sec[s]->sh_size);
	p->n = total;
	return 0;
}

/* The value slot for link-time address @where, or NULL. */
static uint64_t *fi_pfe_slot(struct fi_pfe *p, uint64_t where)
{
	for (size_t s = 0; s < p->nsec; s++) {
		uint64_t off = where - p->sec[s]->sh_addr;

		if (where >= p->sec[s]->sh_addr && off < p->sec[s]->sh_size &&
		    off % 8 == 0)
			return &p->val[p->first[s] + off / 8];
	}
	return NULL;
}

/* R_X86_64_64 against a defined symbol of the relocation's symbol table. */
static bool fi_rela_sym(const struct fi_rd *rd, const Elf64_Shdr *rs,
			const Elf64_Rela *r, uint64_t *val)
{
	const struct fi_elf *elf = rd->elf;
	const Elf64_Shdr *st;
	size_t k = ELF64_R_SYM(r->r_info);
	Elf64_Sym sym;

	if (rs->sh_link == 0 || rs->sh_link >= elf->shnum)
		return false;
	st = &elf->shdrs[rs->sh_link];
	if ((st->sh_type != SHT_DYNSYM && st->sh_type != SHT_SYMTAB) ||
	    st->sh_entsize != sizeof(sym) || k >= st->sh_size / sizeof(sym))
		return false;
	fi_get_sym(rd, st, k, &sym);
	if (sym.st_shndx == SHN_UNDEF)
		return false;	/* resolved at load time: unknown here */
	*val = sym.st_value + (uint64_t)r->r_addend;
	return true;
}

/*
 * A PIE or DSO linked by lld leaves the entries zero in the file and puts
 * their values in RELATIVE addends. RELR needs nothing here: its addends
 * are stored in place, so at link-time addresses (bias 0) the file already
 * holds the value; so does a place no relocation names (fineibt-cc takes
 * the entries' out of DT_RELR: docs/index.md, "Entries at link-time
 * values").
 */
static int fi_pfe_relocate(struct fi_rd *rd, struct fi_pfe *p)
{
	const struct fi_elf *elf = rd->elf;

	for (size_t i = 1; i < elf->shnum && p->nsec; i++) {
		const Elf64_Shdr *rs = &elf->shdrs[i];
		size_t n;

		if (rs->sh_type != SHT_RELA || !(rs->sh_flags & SHF_ALLOC))
			continue;
		if (rs->sh_entsize != sizeof(Elf64_Rela) ||
		    rs->sh_size % sizeof(Elf64_Rela))
			return fi_fail(rd, -ENOEXEC,
				       "relocation section %zu has a bad entry size", i);
		n = rs->sh_size / sizeof(Elf64_Rela);
		for (size_t k = 0; k < n; k++) {
			Elf64_Rela r;
			uint64_t *slot, v;

			memcpy(&r, fi_sec_data(rd, rs) + k * sizeof(r), sizeof(r));
			slot = fi_pfe_slot(p, r.r_offset);
			if (!slot)
				continue;
			if (ELF64_R_TYPE(r.r_info) == R_X86_64_RELATIVE)
				*slot = (uint64_t)r.r_addend;
			else if (ELF64_R_TYPE(r.r_info) == R_X86_64_64 &&
				 fi_rela_sym(rd, rs, &r, &v))
				*slot = v;
		}
	}
	return 0;
}

static int fi_read_entries(struct fi_rd *rd)
{
	struct fi_pfe p = { 0 };
	size_t out = 0;
	int ret;

	ret = fi_pfe_collect(rd, &p);
	if (!ret)
		ret = fi_pfe_relocate(rd, &p);
	if (ret) {
		free(p.val);
		return ret;
	}
	/* Zero entries belong to functions the linker discarded. */
	for (size_t i = 0; i < p.n; i++) {
		if (p.val[i])
			p.val[out++] = p.val[i];
	}
	fi_sort_u64(p.val, out);
	rd->elf->entries = p.val;
	rd->elf->nentries = fi_dedup_u64(p.val, out);
	return 0;
}

/* ------------------------------------------------ .kcfi_traps and note */

static int fi_read_traps(struct fi_rd *rd)
{
	const struct fi_elf *elf = rd->elf;
	struct fi_image *im = rd->im;
	size_t total = 0;

	for (size_t i = 1; i < elf->shnum; i++) {
		const Elf64_Shdr *sh = &elf->shdrs[i];

		if (sh->sh_type != SHT_PROGBITS ||
		    strcmp(fi_sec_name(elf, sh), ".kcfi_traps"))
			continue;
		if (sh->sh_size % 4)
			return fi_fail(rd, -ENOEXEC, ".kcfi_traps size not a multiple of 4");
		total += sh->sh_size / 4;
	}
	im->traps = calloc(total ? total : 1, sizeof(*im->traps));
	if (!im->traps)
		return fi_fail(rd, -ENOMEM, "out of memory");
	for (size_t i = 1; i < elf->shnum; i++) {
		const Elf64_Shdr *sh = &elf->shdrs[i];

		if (sh->sh_type != SHT_PROGBITS ||
		    strcmp(fi_sec_name(elf, sh), ".kcfi_traps"))
			continue;
		/* Each entry is relative to its own address. */
		for (uint64_t off = 0; off < sh->sh_size; off += 4) {
			int32_t rel = (int32_t)fi_load32(fi_sec_data(rd, sh) + off);

			im->traps[im->ntraps++] = sh->sh_addr + off + (uint64_t)(int64_t)rel;
		}
	}
	fi_sort_u64(im->traps, im->ntraps);
	im->ntraps = fi_dedup_u64(im->traps, im->ntraps);
	return 0;
}

static void fi_read_note(struct fi_rd *rd)
{
	const struct fi_elf *elf = rd->elf;

	for (size_t i = 1; i < elf->shnum; i++) {
		const Elf64_Shdr *sh = &elf->shdrs[i];

		/* NOBITS and NULL sections are not bounds-checked: no bytes. */
		if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL ||
		    strcmp(fi_sec_name(elf, sh), FI_NOTE_SECTION))
			continue;
		/* A bad record leaves the note absent or "present, untrusted". */
		fi_note_decode(fi_sec_data(rd, sh), sh->sh_size, &rd->im->note);
		return;
	}
}

/* ------------------------------------------------------ open and close */

/* Everything but discovery, which the caller runs on the views it wants. */
static int fi_parse(struct fi_rd *rd)
{
	int ret;

	ret = fi_read_ehdr(rd);
	if (!ret)
		ret = fi_read_phdrs(rd);
	if (!ret)
		ret = fi_read_shdrs(rd);
	if (!ret)
		ret = fi_read_symbols(rd);
	if (!ret)
		ret = fi_read_entries(rd);
	if (!ret)
		ret = fi_read_traps(rd);
	if (ret)
		return ret;
	fi_note_stub_sections(rd);
	fi_read_note(rd);
	return 0;
}

/* Parse @buf into @im (zeroed by the caller); @im->file is not touched. */
static int fi_load(struct fi_image *im, const char *name, const uint8_t *buf,
		   size_t size, char *err, size_t errlen)
{
	struct fi_rd rd = {
		.im = im, .buf = buf, .size = size, .err = err, .errlen = errlen,
	};

	im->path = strdup(name ? name : "(buffer)");
	im->elf = rd.elf = calloc(1, sizeof(*rd.elf));
	if (!im->path || !im->elf)
		return fi_fail(&rd, -ENOMEM, "out of memory");
	return fi_parse(&rd);
}

static int fi_discover_or_fail(struct fi_image *im, char *err, size_t errlen)
{
	int ret = fi_elf_discover(im);

	if (ret && err && errlen)
		snprintf(err, errlen, "out of memory");
	return ret;
}

int fi_image_from_buffer(struct fi_image *im, const char *name, uint8_t *buf,
			 size_t size, char *err, size_t errlen)
{
	int ret;

	memset(im, 0, sizeof(*im));
	im->file = buf;
	im->file_size = size;
	ret = fi_load(im, name, buf, size, err, errlen);
	if (!ret)
		ret = fi_discover_or_fail(im, err, errlen);
	if (ret)
		fi_image_close(im);
	return ret;
}

static int fi_read_all(int fd, uint8_t *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* the file shrank under us */
		got += (size_t)n;
	}
	return 0;
}

static int fi_open_fail(char *err, size_t errlen, int code, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return code;
}

/* Open @path: a regular file of at most FI_MAX_FILE bytes. Returns the fd. */
static int fi_open_regular(const char *path, size_t *size,
			   char *err, size_t errlen)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fi_open_fail(err, errlen, -errno, strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return fi_open_fail(err, errlen, ret, strerror(-ret));
	}
	if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ?
		       fi_open_fail(err, errlen, -EISDIR, "is a directory") :
		       fi_open_fail(err, errlen, -EINVAL, "not a regular file");
	}
	if ((uint64_t)st.st_size > FI_MAX_FILE) {
		close(fd);
		return fi_open_fail(err, errlen, -EFBIG, "file too large (over 1 GiB)");
	}
	*size = (size_t)st.st_size;
	return fd;
}

int fi_image_open(struct fi_image *im, const char *path,
		  char *err, size_t errlen)
{
	uint8_t *buf;
	size_t size;
	int fd, ret;

	memset(im, 0, sizeof(*im));
	fd = fi_open_regular(path, &size, err, errlen);
	if (fd < 0)
		return fd;
	buf = malloc(size ? size : 1);
	if (!buf) {
		close(fd);
		return fi_open_fail(err, errlen, -ENOMEM, "out of memory");
	}
	ret = fi_read_all(fd, buf, size);
	close(fd);
	if (ret) {
		free(buf);
		return fi_open_fail(err, errlen, ret, strerror(-ret));
	}
	return fi_image_from_buffer(im, path, buf, size, err, errlen);
}

void fi_image_close(struct fi_image *im)
{
	if (im->elf) {
		free(im->elf->segs);
		free(im->elf->shdrs);
		free(im->elf->entries);
		free(im->elf->cfi);
		free(im->elf->names);
		free(im->elf);
	}
	fi_elf_free_sites(im);
	free(im->views);
	free(im->syms);
	free(im->typeids);
	free(im->traps);
	free(im->file);
	free((char *)im->path);
	memset(im, 0, sizeof(*im));
}

/*
 * Point the views at the module loaded at @bias: each PT_LOAD's whole
 * memory size is mapped there (the tail past the file size is zero-fill),
 * except segments without access rights, which may be PROT_NONE and are
 * given no bytes.
 */
static int fi_attach_views(struct fi_image *im, uint64_t bias)
{
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_seg *s = &im->elf->segs[i];

		if (s->vaddr + bias + s->memsz < s->vaddr + bias)
			return -EINVAL;
	}
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_seg *s = &im->elf->segs[i];
		struct fi_view *v = &im->views[i];

		v->mem = (uint8_t *)(uintptr_t)(s->vaddr + bias);
		v->size = (s->flags & (PF_R | PF_X)) ? s->memsz : 0;
	}
	im->live = true;
	im->bias = bias;
	return 0;
}

int fi_image_attach_live(struct fi_image *im, uint64_t bias)
{
	int ret;

	if (!im->elf || im->live)
		return -EINVAL;
	ret = fi_attach_views(im, bias);
	return ret ? ret : fi_elf_discover(im);
}

/* -------------------------------------------------- live, file not kept */

/*
 * Copy the names the image keeps (function symbols, type ids) into one
 * pool, so that the file they point into can go: about ten bytes per
 * function instead of the whole string table.
 */
static int fi_pool_names(struct fi_image *im)
{
	size_t total = 0;
	char *at;

	for (size_t i = 0; i < im->nsyms; i++)
		total += strlen(im->syms[i].name) + 1;
	for (size_t i = 0; i < im->ntypeids; i++)
		total += strlen(im->typeids[i].name) + 1;
	im->elf->names = at = malloc(total ? total : 1);
	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < im->nsyms; i++) {
		const char *name = at;

		at = stpcpy(at, im->syms[i].name) + 1;
		im->syms[i].name = name;
	}
	for (size_t i = 0; i < im->ntypeids; i++) {
		const char *name = at;

		at = stpcpy(at, im->typeids[i].name) + 1;
		im->typeids[i].name = name;
	}
	return 0;
}

/*
 * Parse the file mapped read-only at @map and keep what the image needs
 * once the mapping is gone. Only the pages of the sections parsed are
 * ever touched (headers, symbols, relocations, kCFI metadata), and they
 * are the page cache's: never the text, never a private copy.
 */
static int fi_load_mapped(struct fi_image *im, const char *path,
			  const uint8_t *map, size_t size,
			  char *err, size_t errlen)
{
	int ret = fi_load(im, path, map, size, err, errlen);

	if (!ret && fi_pool_names(im))
		ret = fi_open_fail(err, errlen, -ENOMEM, "out of memory");
	if (im->elf) {
		im->elf->shstr = NULL;	/* pointed into the mapping */
		im->elf->shstr_size = 0;
	}
	return ret;
}

int fi_image_open_live(struct fi_image *im, const char *path, uint64_t bias,
		       char *err, size_t errlen)
{
	static const uint8_t empty[1];
	const uint8_t *map = empty;
	size_t size;
	int fd, ret;

	memset(im, 0, sizeof(*im));
	fd = fi_open_regular(path, &size, err, errlen);
	if (fd < 0)
		return fd;
	if (size)
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	ret = map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret)
		return fi_open_fail(err, errlen, ret, strerror(-ret));
	ret = fi_load_mapped(im, path, map, size, err, errlen);
	if (size)
		munmap((void *)map, size);
	if (!ret && fi_attach_views(im, bias))
		ret = fi_open_fail(err, errlen, -EINVAL,
				   "segments wrap the address space at this bias");
	if (!ret)
		ret = fi_discover_or_fail(im, err, errlen);
	if (ret)
		fi_image_close(im);
	return ret;
}

/* ------------------------------------------------------------ lookup */

const struct fi_sym *fi_image_sym(const struct fi_image *im, uint64_t addr)
{
	const struct fi_sym *syms = im->syms;
	size_t lo = 0, hi = im->nsyms;

	/* Read from memory at start-up: symbols come from the file now. */
	if (im->lazy_syms && !hi)
		fi_symfile_get(im, &syms, &hi);
	/* The last symbol whose address is <= @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &syms[lo - 1] : NULL;
}

size_t fi_image_symbolize(const struct fi_image *im, uint64_t addr,
			  char *buf, size_t len)
{
	const struct fi_sym *s = fi_image_sym(im, addr);
	struct fi_strbuf b;

	/* Async-signal-safe: the SIGILL handler names addresses with it. */
	fi_strbuf_init(&b, buf, len, 0);
	if (!s) {
		fi_strbuf_hex(&b, addr, 1);
		return b.len;
	}
	fi_strbuf_str(&b, s->name);
	fi_strbuf_str(&b, "+");
	fi_strbuf_hex(&b, addr - s->addr, 1);
	return b.len;
}

const struct fi_func *fi_image_func(const struct fi_image *im, uint64_t addr)
{
	size_t lo = 0, hi = im->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->funcs[mid].addr == addr)
			return &im->funcs[mid];
		if (im->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool fi_image_is_trap(const struct fi_image *im, uint64_t ud2_addr)
{
	size_t lo = 0, hi = im->nktraps;

	if (!im->ktraps)
		return fi_bsearch_u64(im->traps, im->ntraps, ud2_addr);
	/* No library call: the SIGILL handler asks. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = fi_image_trap(im, mid);

		if (v == ud2_addr)
			return true;
		if (v < ud2_addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

bool fi_image_kcfi_unprefixed(const struct fi_image *im)
{
	if (fi_image_stock(im))
		return fi_image_stock_refused(im) != NULL;
	return im->ntraps && !im->ncalls && im->nbad;
}

bool fi_image_stock(const struct fi_image *im)
{
	return im->is_stock;
}

const char *fi_image_stock_refused(const struct fi_image *im)
{
	const struct fi_elf *elf = im->elf;

	if (!fi_image_stock(im))
		return NULL;
	for (size_t i = 0; i < im->nbad; i++) {
		if (!strcmp(im->bad[i].what, "__cfi_ symbol without preamble"))
			return "a __cfi_ symbol names no 16-byte preamble "
			       "(functions aligned below 16 bytes, as -Os does: "
			       "add -falign-functions=16)";
	}
	if (im->ncalls)
		return "stock and fineibt-cc call sites in one module";
	/* Preambles are found by name or by patchable entry only. */
	if (elf && !elf->has_symtab && !elf->nentries && !elf->pfe)
		return "stripped: no __cfi_ symbols to find its preambles by "
		       "(keep the symbol table, or add "
		       "-fpatchable-function-entry=11,11)";
	return NULL;
}
