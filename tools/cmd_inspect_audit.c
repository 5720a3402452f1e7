/* SPDX-License-Identifier: MIT */
/*
 * fineibt inspect: the forward-edge holes of a file that no CFI check
 * covers (docs/inspect.md, "Hardening audit"). A PLT jump is no kCFI call
 * site: with a writable GOT a single write redirects it in every mode. An
 * executable stack or text relocations leave writable code.
 *
 * Read from the file's program headers, dynamic section and section
 * headers (the GOT's extent), every offset bounds-checked: the file has
 * been accepted by fi_image_open already, but is still untrusted.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

struct insp_elf {
	const uint8_t *p;
	size_t size;
	const Elf64_Ehdr *eh;
};

/* @n entries of @esz bytes at @off, inside the file. */
static const void *insp_at(const struct insp_elf *e, uint64_t off,
			   uint64_t n, uint64_t esz)
{
	if (esz && n > e->size / esz)
		return NULL;
	if (off > e->size || n * esz > e->size - off)
		return NULL;
	return e->p + off;
}

static const Elf64_Phdr *insp_phdrs(const struct insp_elf *e)
{
	if (e->eh->e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	return insp_at(e, e->eh->e_phoff, e->eh->e_phnum, sizeof(Elf64_Phdr));
}

/* The dynamic tags that matter here. */
static void insp_dynamic(const struct insp_elf *e, const Elf64_Phdr *dyn,
			 struct insp_audit *a)
{
	const Elf64_Dyn *d = insp_at(e, dyn->p_offset, dyn->p_filesz / sizeof(*d),
				     sizeof(*d));

	for (size_t i = 0; d && i < dyn->p_filesz / sizeof(*d); i++) {
		switch (d[i].d_tag) {
		case DT_BIND_NOW:
			a->bind_now = true;
			break;
		case DT_FLAGS:
			a->bind_now |= !!(d[i].d_un.d_val & DF_BIND_NOW);
			a->textrel |= !!(d[i].d_un.d_val & DF_TEXTREL);
			break;
		case DT_FLAGS_1:
			a->bind_now |= !!(d[i].d_un.d_val & DF_1_NOW);
			break;
		case DT_TEXTREL:
			a->textrel = true;
			break;
		case DT_PLTGOT:
		case DT_JMPREL:
			a->has_got = true;
			break;
		}
		if (d[i].d_tag == DT_NULL)
			break;
	}
}

/*
 * A GOT section (.got, .got.plt) outside PT_GNU_RELRO stays writable for
 * the life of the process. Without section headers: any GOT the dynamic
 * section names, unless full RELRO covers it by construction.
 */
static bool insp_got_writable(const struct insp_elf *e, uint64_t rlo,
			      uint64_t rhi, const struct insp_audit *a)
{
	const Elf64_Ehdr *eh = e->eh;
	const Elf64_Shdr *sh = NULL;
	const char *names = NULL;
	bool seen = false;

	if (eh->e_shentsize == sizeof(Elf64_Shdr))
		sh = insp_at(e, eh->e_shoff, eh->e_shnum, sizeof(*sh));
	if (sh && eh->e_shstrndx < eh->e_shnum)
		names = insp_at(e, sh[eh->e_shstrndx].sh_offset,
				sh[eh->e_shstrndx].sh_size, 1);
	if (!sh || !names)
		return a->has_got && !(a->relro && a->bind_now);
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const char *n = sh[i].sh_name < sh[eh->e_shstrndx].sh_size ?
				names + sh[i].sh_name : "";

		if (strncmp(n, ".got", 4) || (n[4] && strcmp(n + 4, ".plt")) ||
		    !(sh[i].sh_flags & SHF_ALLOC) || !sh[i].sh_size)
			continue;
		seen = true;
		if (!a->relro || sh[i].sh_addr < rlo ||
		    sh[i].sh_addr + sh[i].sh_size > rhi)
			return true;
		/* Lazy binding writes .got.plt after RELRO is applied. */
		if (!a->bind_now && n[4])
			return true;
	}
	return !seen && a->has_got && !(a->relro && a->bind_now);
}

static void insp_audit_elf(const struct insp_elf *e, struct insp_audit *a)
{
	const Elf64_Phdr *ph = insp_phdrs(e);
	uint64_t rlo = 0, rhi = 0;
	bool stack = false;

	for (size_t i = 0; ph && i < e->eh->e_phnum; i++) {
		switch (ph[i].p_type) {
		case PT_GNU_RELRO:
			a->relro = true;
			rlo = ph[i].p_vaddr;
			rhi = ph[i].p_vaddr + ph[i].p_memsz;
			break;
		case PT_GNU_STACK:
			stack = true;
			a->exec_stack = !!(ph[i].p_flags & PF_X);
			break;
		case PT_DYNAMIC:
			a->dynamic = true;
			insp_dynamic(e, &ph[i], a);
			break;
		}
	}
	/* No PT_GNU_STACK: the loader gives the process an executable stack. */
	if (!stack)
		a->exec_stack = true;
	a->writable_got = insp_got_writable(e, rlo, rhi, a);
}

int insp_audit(const char *path, struct insp_audit *a)
{
	struct insp_elf e = { 0 };
	struct stat st;
	void *p;
	int fd;

	memset(a, 0, sizeof(*a));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	e.p = p;
	e.size = (size_t)st.st_size;
	e.eh = p;
	a->valid = e.eh->e_type == ET_EXEC || e.eh->e_type == ET_DYN;
	if (a->valid)
		insp_audit_elf(&e, a);
	munmap(p, e.size);
	return 0;
}

const char *insp_relro_name(const struct insp_audit *a)
{
	if (!a->relro)
		return "none";
	return a->bind_now ? "full" : "partial";
}

/* The findings, one line each (@json: as a JSON array of strings). */
static const char *const insp_finding_text[] = {
	"writable GOT: one write redirects a PLT jump, which no CFI mode checks (link with -z relro -z now; fineibt-cc does)",
	"no BIND_NOW: lazy binding keeps the GOT writable (link with -z now)",
	"no RELRO: relocated data stays writable (link with -z relro)",
	"executable stack: code can be written and run on it (link with -z noexecstack)",
	"text relocations: the loader makes code writable (build with -fPIC)",
};

static bool insp_finding(const struct insp_audit *a, size_t i)
{
	switch (i) {
	case 0: return a->writable_got;
	case 1: return a->dynamic && !a->bind_now;
	case 2: return !a->relro;
	case 3: return a->exec_stack;
	default: return a->textrel;
	}
}

size_t insp_audit_print(const struct insp_audit *a, bool json)
{
	size_t n = 0;

	for (size_t i = 0; a->valid && i < sizeof(insp_finding_text) / sizeof(insp_finding_text[0]); i++) {
		if (!insp_finding(a, i))
			continue;
		if (json)
			printf("%s\"%s\"", n ? ", " : "", insp_finding_text[i]);
		else
			printf("  audit: %s\n", insp_finding_text[i]);
		n++;
	}
	return n;
}
