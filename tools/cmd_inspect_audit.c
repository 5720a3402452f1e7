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
 *
 * A set-user-ID or set-group-ID file loads its libraries from its RUNPATH
 * (or RPATH) directories, and a library named by an absolute path from
 * that path's directory, with its privileges: such a directory that a
 * user other than root and the file's owner can change (fineibt-cc names
 * the runtime by its path, often in a build directory, or writes that
 * directory as the RUNPATH) hands that user the program's privileges
 * (src/offline/trustdir.c).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "trustdir.h"

struct insp_elf {
	const uint8_t *p;
	size_t size;
	const Elf64_Ehdr *eh;
	/* From the dynamic section (0: absent); paths are offsets in strtab. */
	uint64_t strtab, strsz, runpath, rpath;
	bool has_runpath, has_rpath;
	/* DT_NEEDED names (the first INSP_NEEDED_MAX), offsets in strtab. */
	uint64_t needed[16];
	size_t nneeded;
};
#define INSP_NEEDED_MAX	16

/*
 * @n entries of @esz bytes at @off, inside the file. Tables of 8-byte
 * records (headers, dynamic entries) must be 8-byte aligned, as in every
 * file a linker writes: a misaligned one is treated as absent.
 */
static const void *insp_at(const struct insp_elf *e, uint64_t off,
			   uint64_t n, uint64_t esz)
{
	if (esz % 8 == 0 && ((uintptr_t)e->p + off) % 8)
		return NULL;
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
static void insp_dynamic(struct insp_elf *e, const Elf64_Phdr *dyn,
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
		case DT_STRTAB:
			e->strtab = d[i].d_un.d_ptr;
			break;
		case DT_STRSZ:
			e->strsz = d[i].d_un.d_val;
			break;
		case DT_RUNPATH:
			e->runpath = d[i].d_un.d_val;
			e->has_runpath = true;
			break;
		case DT_RPATH:
			e->rpath = d[i].d_un.d_val;
			e->has_rpath = true;
			break;
		case DT_NEEDED:
			if (e->nneeded < INSP_NEEDED_MAX)
				e->needed[e->nneeded++] = d[i].d_un.d_val;
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

/* The NUL-terminated string at @off of the dynamic string table, or NULL. */
static const char *insp_dynstr(const struct insp_elf *e, const Elf64_Phdr *ph,
			       uint64_t off)
{
	const char *s = NULL;
	uint64_t at;

	for (size_t i = 0; ph && i < e->eh->e_phnum && !s; i++) {
		if (ph[i].p_type != PT_LOAD || e->strtab < ph[i].p_vaddr ||
		    e->strtab - ph[i].p_vaddr >= ph[i].p_filesz)
			continue;
		at = ph[i].p_offset + (e->strtab - ph[i].p_vaddr);
		if (off >= e->strsz || at > e->size || off >= e->size - at)
			return NULL;
		s = (const char *)e->p + at + off;
	}
	/* Must end inside the table and the file. */
	if (s && !memchr(s, '\0', e->size - (size_t)((const uint8_t *)s - e->p)))
		return NULL;
	return s;
}

/*
 * Each entry of a search path the loader honours in a set-ID program
 * (absolute: it drops relative and $ORIGIN entries there), checked.
 */
static void insp_search_path(const char *list, uid_t owner, struct insp_audit *a)
{
	char dir[4096], why[sizeof(a->runpath_why)];

	while (list && *list && !a->unsafe_runpath) {
		size_t n = strcspn(list, ":");

		if (n && n < sizeof(dir) && list[0] == '/' && !memchr(list, '$', n)) {
			memcpy(dir, list, n);
			dir[n] = '\0';
			if (fi_dir_untrusted(dir, owner, why, sizeof(why)) == 1) {
				a->unsafe_runpath = true;
				snprintf(a->runpath_why, sizeof(a->runpath_why),
					 "%s: %s", dir, why);
			}
		}
		list += n + (list[n] == ':');
	}
}

/*
 * A library named by its absolute path (fineibt-cc names the runtime so)
 * is loaded from that directory without a search, in a set-ID program too.
 */
static void insp_needed_paths(const struct insp_elf *e, const Elf64_Phdr *ph,
			      uid_t owner, struct insp_audit *a)
{
	char dir[4096], why[sizeof(a->needed_why)];

	for (size_t i = 0; i < e->nneeded && !a->unsafe_needed; i++) {
		const char *lib = insp_dynstr(e, ph, e->needed[i]);
		const char *slash = lib ? strrchr(lib, '/') : NULL;
		size_t n;

		if (!slash || lib[0] != '/' || strchr(lib, '$'))
			continue;
		n = slash == lib ? 1 : (size_t)(slash - lib);
		if (n >= sizeof(dir))
			continue;
		memcpy(dir, lib, n);
		dir[n] = '\0';
		if (fi_dir_untrusted(dir, owner, why, sizeof(why)) == 1) {
			a->unsafe_needed = true;
			snprintf(a->needed_why, sizeof(a->needed_why), "%s: %s",
				 lib, why);
		}
	}
}

static void insp_runpaths(const struct insp_elf *e, const Elf64_Phdr *ph,
			  uid_t owner, struct insp_audit *a)
{
	if (!a->setid || !e->strtab)
		return;
	insp_needed_paths(e, ph, owner, a);
	if (e->has_runpath)
		insp_search_path(insp_dynstr(e, ph, e->runpath), owner, a);
	/* The loader ignores DT_RPATH when DT_RUNPATH is present. */
	else if (e->has_rpath)
		insp_search_path(insp_dynstr(e, ph, e->rpath), owner, a);
}

static void insp_audit_elf(struct insp_elf *e, uid_t owner, struct insp_audit *a)
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
	insp_runpaths(e, ph, owner, a);
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
	a->setid = st.st_mode & (S_ISUID | S_ISGID);
	if (a->valid)
		insp_audit_elf(&e, st.st_uid, a);
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
	"no RELRO: relocated data stays writable, .fini_array and .init_array included: one write redirects a call ld.so makes, which no CFI mode checks (link with -z relro)",
	"executable stack: code can be written and run on it (link with -z noexecstack)",
	"text relocations: the loader makes code writable (build with -fPIC)",
	"setuid/setgid with a RUNPATH others can change",
	"setuid/setgid loading a library from a directory others can change",
};

static bool insp_finding(const struct insp_audit *a, size_t i)
{
	switch (i) {
	case 0: return a->writable_got;
	case 1: return a->dynamic && !a->bind_now;
	case 2: return !a->relro;
	case 3: return a->exec_stack;
	case 4: return a->textrel;
	case 5: return a->unsafe_runpath;
	default: return a->unsafe_needed;
	}
}

/* @s as the inside of a JSON string. */
static void insp_json_chars(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
}

/* The RUNPATH (5) or library path (6) finding: where and why, the fix. */
static void insp_runpath_finding(const struct insp_audit *a, size_t i,
				 bool json)
{
	static const char fix[] = ": a user other than root and the owner "
		"chooses the code this program runs with its privileges "
		"(install fineibt where only root can write, or link it with "
		"-static-fineibt)";
	const char *why = i == 5 ? a->runpath_why : a->needed_why;

	if (!json) {
		printf("  audit: %s (%s)%s\n", insp_finding_text[i], why, fix);
		return;
	}
	printf("\"%s (", insp_finding_text[i]);
	insp_json_chars(why);
	printf(")%s\"", fix);
}

size_t insp_audit_print(const struct insp_audit *a, bool json)
{
	size_t n = 0;

	for (size_t i = 0; a->valid && i < sizeof(insp_finding_text) / sizeof(insp_finding_text[0]); i++) {
		if (!insp_finding(a, i))
			continue;
		if (json && n)
			printf(", ");
		if (i >= 5)
			insp_runpath_finding(a, i, json);
		else if (json)
			printf("\"%s\"", insp_finding_text[i]);
		else
			printf("  audit: %s\n", insp_finding_text[i]);
		n++;
	}
	return n;
}
