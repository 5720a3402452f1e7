// SPDX-License-Identifier: MIT
/*
 * Lazy symbols (symfile.h). The runtime's start-up path reads no file
 * (src/elf/imgindex.c), so a module it rewrote has no symbols until a CFI
 * report needs one. Then, inside the SIGILL handler, the module's file is
 * mapped read-only, checked to still be the module's file, and its
 * function symbols are copied into one anonymous mapping, sorted, and
 * made read-only. The choice of symbols is elf.c's (fi_read_symbols):
 * .symtab else .dynsym, defined STT_FUNC/STT_GNU_IFUNC with a value,
 * without __cfi_, __kcfi_typeid_ and __bhi_args; one per address, a sized
 * one first, then the smallest name.
 *
 * Everything is an async-signal-safe system call or a plain loop; the
 * tables are published lock-free (a slot is claimed with a CAS, filled,
 * then released) and never freed, like the registered modules themselves.
 * A file that is gone or replaced gives an empty table: reports then
 * print addresses.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_int.h"
#include "rawsys.h"
#include "symfile.h"

/* Modules whose symbols may be loaded: the trap handler's table and more. */
#define FI_SF_SLOTS	1024

enum { FI_SF_FREE, FI_SF_LOADING, FI_SF_READY };

static struct fi_sf_slot {
	int state;
	const struct fi_image *im;
	const struct fi_sym *syms;
	size_t nsyms;
} fi_sf_slots[FI_SF_SLOTS];

/* ------------------------------------------------------------ identity */

bool fi_symfile_same(const struct fi_image *im, const uint8_t *file,
		     size_t size)
{
	const Elf64_Phdr *mem = im->phdr;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
	size_t phlen = im->phnum * sizeof(Elf64_Phdr);

	if (!im->lazy_syms || !mem)
		return true;
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phnum != im->phnum ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !fi_in_bounds(eh->e_phoff, phlen, size) ||
	    memcmp(file + eh->e_phoff, mem, phlen))
		return false;
	/* The build ID (when linked with one) and the module index. */
	for (size_t i = 0; i < im->phnum; i++) {
		const Elf64_Phdr *ph = &mem[i];

		if (ph->p_type != PT_NOTE)
			continue;
		if (!fi_in_bounds(ph->p_offset, ph->p_filesz, size) ||
		    !fi_image_ptr(im, ph->p_vaddr, ph->p_filesz) ||
		    memcmp(file + ph->p_offset, fi_image_ptr(im, ph->p_vaddr,
							     ph->p_filesz),
			   ph->p_filesz))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ the table */

struct fi_sf_src {
	const uint8_t *file;
	size_t size;
	const Elf64_Sym *sym;	/* may be unaligned: read with memcpy */
	size_t nsym;
	const char *str;
	size_t strsize;
};

/* .symtab, else .dynsym, and its string table; false if none is usable. */
static bool fi_sf_symtab(struct fi_sf_src *s)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)s->file;
	size_t shlen = (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
	Elf64_Shdr sh, str;
	size_t pick = 0;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !fi_in_bounds(eh->e_shoff, shlen, s->size))
		return false;
	for (size_t i = 1; i < eh->e_shnum; i++) {
		memcpy(&sh, s->file + eh->e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type == SHT_SYMTAB) {
			pick = i;
			break;
		}
		if (sh.sh_type == SHT_DYNSYM && !pick)
			pick = i;
	}
	if (!pick)
		return false;
	memcpy(&sh, s->file + eh->e_shoff + pick * sizeof(sh), sizeof(sh));
	if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh->e_shnum ||
	    sh.sh_link == pick || !fi_in_bounds(sh.sh_offset, sh.sh_size, s->size))
		return false;
	memcpy(&str, s->file + eh->e_shoff + sh.sh_link * sizeof(str),
	       sizeof(str));
	if (!fi_in_bounds(str.sh_offset, str.sh_size, s->size) || !str.sh_size ||
	    s->file[str.sh_offset + str.sh_size - 1])
		return false;
	s->sym = (const Elf64_Sym *)(s->file + sh.sh_offset);
	s->nsym = sh.sh_size / sizeof(Elf64_Sym);
	s->str = (const char *)s->file + str.sh_offset;
	s->strsize = str.sh_size;
	return true;
}

static bool fi_sf_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* Symbol @k if it is one elf.c keeps (a plain function), else NULL name. */
static const char *fi_sf_pick(const struct fi_sf_src *s, size_t k,
			      Elf64_Sym *sym)
{
	const char *name;
	int type;

	memcpy(sym, (const uint8_t *)s->sym + k * sizeof(*sym), sizeof(*sym));
	type = ELF64_ST_TYPE(sym->st_info);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
	    sym->st_shndx == SHN_UNDEF || !sym->st_value ||
	    sym->st_name >= s->strsize)
		return NULL;
	name = s->str + sym->st_name;
	if (!*name || fi_sf_prefix(name, "__cfi_") ||
	    fi_sf_prefix(name, "__kcfi_typeid_") || !strcmp(name, "__bhi_args"))
		return NULL;
	return name;
}

/* fi_cmp_sym's order: address, then sized first, then name. */
static bool fi_sf_less(const struct fi_sym *a, const struct fi_sym *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr;
	if (!a->size != !b->size)
		return a->size != 0;
	return strcmp(a->name, b->name) < 0;
}

static void fi_sf_sift(struct fi_sym *v, size_t i, size_t n)
{
	for (;;) {
		size_t c = 2 * i + 1;
		struct fi_sym t;

		if (c >= n)
			return;
		if (c + 1 < n && fi_sf_less(&v[c], &v[c + 1]))
			c++;
		if (!fi_sf_less(&v[i], &v[c]))
			return;
		t = v[i], v[i] = v[c], v[c] = t;
		i = c;
	}
}

/* In place, no allocation: the handler cannot call qsort's malloc. */
static void fi_sf_heapsort(struct fi_sym *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		fi_sf_sift(v, i, n);
	for (size_t end = n; end-- > 1;) {
		struct fi_sym t = v[0];

		v[0] = v[end], v[end] = t;
		fi_sf_sift(v, 0, end);
	}
}

/* Copy the kept symbols and their names into one fresh mapping. */
static size_t fi_sf_build(const struct fi_sf_src *s, struct fi_sym **out,
			  size_t *maplen)
{
	size_t n = 0, names = 0, at;
	struct fi_sym *v;
	char *pool;
	Elf64_Sym sym;

	for (size_t k = 1; k < s->nsym; k++) {
		const char *name = fi_sf_pick(s, k, &sym);

		if (name) {
			n++;
			names += strlen(name) + 1;
		}
	}
	*maplen = n * sizeof(*v) + names;
	if (!n)
		return 0;
	v = fi_raw_mmap(NULL, *maplen, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		return 0;
	pool = (char *)(v + n);
	n = at = 0;
	for (size_t k = 1; k < s->nsym; k++) {
		const char *name = fi_sf_pick(s, k, &sym);
		size_t len;

		if (!name)
			continue;
		len = strlen(name) + 1;
		memcpy(pool + at, name, len);
		v[n++] = (struct fi_sym){ .addr = sym.st_value,
					  .size = sym.st_size,
					  .name = pool + at };
		at += len;
	}
	*out = v;
	return n;
}

/* One per address: the first in fi_sf_less's order (elf.c's dedup). */
static size_t fi_sf_dedup(struct fi_sym *v, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && v[out - 1].addr == v[i].addr)
			continue;
		v[out++] = v[i];
	}
	return out;
}

/* Read @im's file: its symbol table, or none. */
static size_t fi_sf_load(const struct fi_image *im, const struct fi_sym **syms)
{
	struct fi_sf_src s = { 0 };
	struct fi_sym *v = NULL;
	size_t n = 0, maplen = 0;
	void *map;

	map = im->path ? fi_raw_map_file(im->path, sizeof(Elf64_Ehdr), &s.size) :
			 MAP_FAILED;
	if (map == MAP_FAILED)
		return 0;
	s.file = map;
	if (fi_symfile_same(im, s.file, s.size) && fi_sf_symtab(&s))
		n = fi_sf_build(&s, &v, &maplen);
	fi_raw_munmap(map, s.size);
	if (!n)
		return 0;
	fi_sf_heapsort(v, n);
	n = fi_sf_dedup(v, n);
	/* Read-only from now on, like the rest of what the handler reads. */
	fi_raw_mprotect(v, maplen, PROT_READ);
	*syms = v;
	return n;
}

static struct fi_sf_slot *fi_sf_find(const struct fi_image *im)
{
	for (size_t i = 0; i < FI_SF_SLOTS; i++) {
		struct fi_sf_slot *s = &fi_sf_slots[i];

		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == FI_SF_READY &&
		    s->im == im)
			return s;
	}
	return NULL;
}

void fi_symfile_get(const struct fi_image *im, const struct fi_sym **syms,
		    size_t *n)
{
	struct fi_sf_slot *s = fi_sf_find(im);

	*syms = NULL;
	*n = 0;
	if (s) {
		*syms = s->syms;
		*n = s->nsyms;
		return;
	}
	for (size_t i = 0; i < FI_SF_SLOTS; i++) {
		int free_state = FI_SF_FREE;

		s = &fi_sf_slots[i];
		if (!__atomic_compare_exchange_n(&s->state, &free_state,
						 FI_SF_LOADING, false,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		s->im = im;
		s->nsyms = fi_sf_load(im, &s->syms);
		__atomic_store_n(&s->state, FI_SF_READY, __ATOMIC_RELEASE);
		*syms = s->syms;
		*n = s->nsyms;
		return;
	}
	/* Table full: load every time (the mapping leaks; rare). */
	*n = fi_sf_load(im, syms);
}
