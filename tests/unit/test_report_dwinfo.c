// SPDX-License-Identifier: MIT
/*
 * src/trap/dwinfo.c: the prototype of a function from .debug_info, on this very
 * test binary (built with -g by clang-22: DWARF 5, strx/addrx forms), for
 * probes of several signatures whose expected text is their source below;
 * through the mapped file; and on damaged copies of .debug_info and
 * .debug_abbrev (byte flips, shortened sections): every lookup must
 * return 0/-ENOENT/-EINVAL with a NUL-terminated buffer, never crash.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "image.h"
#include "report.h"

struct item { int key; };
union u { int i; long l; };
enum e { E_A, E_B };
typedef unsigned long my_size;

#define PROBE __attribute__((noinline, used))

PROBE int p_cmp(const void *a, const void *b)
{
	return a < b;
}

PROBE int p_item(const struct item *a, const struct item *b)
{
	return a->key - b->key;
}

PROBE my_size p_td(my_size n, char *const s, volatile int *v)
{
	return n + (my_size)*s + (my_size)*v;
}

PROBE void p_void(void)
{
	__asm__ volatile("" ::: "memory");
}

PROBE int p_var(const char *fmt, ...)
{
	return fmt[0];
}

PROBE long p_fnptr(int (*f)(const void *, const void *), union u *x, enum e k)
{
	return f(x, x) + x->l + k;
}

PROBE const char *const *p_pp(char **s)
{
	return (const char *const *)s;
}

/* Inlined below and kept out of line: a DIE with DW_AT_abstract_origin. */
static inline unsigned char p_inl(unsigned char c, short s)
{
	return (unsigned char)(c + s);
}

unsigned char (*volatile p_inl_ref)(unsigned char, short) = p_inl;

PROBE int p_uses_inl(int x)
{
	return p_inl((unsigned char)x, 3) + p_inl_ref(1, 2);
}

static const struct {
	const void *fn;
	const char *want;
} probes[] = {
	{ (const void *)p_cmp, "int p_cmp(const void *, const void *)" },
	{ (const void *)p_item,
	  "int p_item(const struct item *, const struct item *)" },
	{ (const void *)p_td, "my_size p_td(my_size, char *const, volatile int *)" },
	{ (const void *)p_void, "void p_void(void)" },
	{ (const void *)p_var, "int p_var(const char *, ...)" },
	{ (const void *)p_fnptr,
	  "long p_fnptr(int (*)(const void *, const void *), union u *, enum e)" },
	{ (const void *)p_pp, "const char *const *p_pp(char **)" },
	{ (const void *)p_inl, "unsigned char p_inl(unsigned char, short)" },
	{ (const void *)p_uses_inl, "int p_uses_inl(int)" },
};

#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static uint64_t exe_bias(void)
{
	extern const ElfW(Ehdr) __ehdr_start;
	const ElfW(Ehdr) *eh = &__ehdr_start;

	return eh->e_type == ET_DYN ? (uint64_t)(uintptr_t)eh : 0;
}

static uint64_t probe_addr(size_t i)
{
	return (uint64_t)(uintptr_t)probes[i].fn - exe_bias();
}

static void test_probes(struct fi_image *im)
{
	char buf[256], small[12];
	bool ok = true;

	for (size_t i = 0; i < NPROBES; i++) {
		int ret = fi_dwarf_proto(im, probe_addr(i), buf, sizeof(buf));

		if (!EXPECT("dwinfo_proto", ret == 0 && !strcmp(buf, probes[i].want))) {
			printf("  got %d '%s', want '%s'\n", ret, buf, probes[i].want);
			ok = false;
		}
	}
	CHECK("dwinfo_probes", ok);
	CHECK("dwinfo_not_a_function",
	      fi_dwarf_proto(im, probe_addr(0) + 1, buf, sizeof(buf)) == -ENOENT &&
	      !buf[0]);
	CHECK("dwinfo_small_buffer",
	      fi_dwarf_proto(im, probe_addr(0), small, sizeof(small)) == 0 &&
	      !strcmp(small, "int p_cmp(c"));
}

static void test_mapped(const struct fi_image *im)
{
	struct fi_image m = *im;
	char buf[256];

	m.file = NULL;
	m.file_size = 0;
	CHECK("dwinfo_mapped", fi_dwarf_proto(&m, probe_addr(1), buf, sizeof(buf)) == 0 &&
	      !strcmp(buf, probes[1].want));
	m.path = "/nonexistent/fineibt-test";
	CHECK("dwinfo_mapped_missing",
	      fi_dwarf_proto(&m, probe_addr(1), buf, sizeof(buf)) == -ENOENT);
}

static Elf64_Shdr *find_section(uint8_t *f, const char *name)
{
	Elf64_Ehdr *eh = (void *)f;
	Elf64_Shdr *sh = (void *)(f + eh->e_shoff);
	const char *str = (const char *)f + sh[eh->e_shstrndx].sh_offset;

	for (unsigned i = 1; i < eh->e_shnum; i++)
		if (!strcmp(str + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

static unsigned int nresult[3];	/* found, -ENOENT, -EINVAL */

static bool lookup_clean(struct fi_image *im, size_t i)
{
	char buf[128];
	int ret;

	memset(buf, 'x', sizeof(buf));
	ret = fi_dwarf_proto(im, probe_addr(i), buf, sizeof(buf));
	nresult[ret == 0 ? 0 : ret == -ENOENT ? 1 : 2]++;
	return (ret == 0 || ret == -ENOENT || ret == -EINVAL) &&
	       memchr(buf, 0, sizeof(buf)) && (ret == 0 || !buf[0]);
}

/* Flip bytes of section @name; every lookup must end cleanly. */
static void test_flips(struct fi_image *im, const char *name, size_t runs)
{
	Elf64_Shdr *sh = find_section(im->file, name);
	unsigned int seed = 4242;
	size_t off, len;
	uint8_t *save;
	bool ok = true;

	if (!CHECK("dwinfo_corrupt_section", sh))
		return;
	off = sh->sh_offset;
	len = sh->sh_size;
	save = malloc(len);
	memcpy(save, im->file + off, len);
	for (size_t r = 0; r < runs && ok; r++) {
		int nflip = 1 + rand_r(&seed) % 8;

		for (int k = 0; k < nflip; k++) {
			/* Mostly the first unit's DIEs (this file's probes). */
			size_t at = (rand_r(&seed) % 4) ?
				    rand_r(&seed) % (len < 4096 ? len : 4096) :
				    rand_r(&seed) % len;

			im->file[off + at] = (uint8_t)rand_r(&seed);
		}
		ok &= lookup_clean(im, r % NPROBES);
		memcpy(im->file + off, save, len);
	}
	printf("  %s: %u found, %u -ENOENT, %u -EINVAL\n", name, nresult[0],
	       nresult[1], nresult[2]);
	memset(nresult, 0, sizeof(nresult));
	if (!strcmp(name, ".debug_info"))
		CHECK("dwinfo_corrupt_info_runs", ok);
	else
		CHECK("dwinfo_corrupt_abbrev_runs", ok);
	free(save);
}

/* The sections cut short at many lengths (as a truncated file would). */
static void test_truncated(struct fi_image *im)
{
	static const char *const names[] = {
		".debug_info", ".debug_abbrev", ".debug_str_offsets",
		".debug_addr", ".debug_str",
	};
	bool ok = true;

	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		Elf64_Shdr *sh = find_section(im->file, names[n]);
		uint64_t size;

		if (!sh)
			continue;
		size = sh->sh_size;
		for (uint64_t cut = 0; cut < size && ok; cut += 1 + size / 97) {
			sh->sh_size = cut;
			ok &= lookup_clean(im, cut % NPROBES);
		}
		sh->sh_size = size;
	}
	CHECK("dwinfo_truncated", ok);
}

int main(void)
{
	struct fi_image im;
	char err[160];

	if (!CHECK("dwinfo_open_self",
		   fi_image_open(&im, "/proc/self/exe", err, sizeof(err)) == 0))
		return fi_check_exit();
	test_probes(&im);
	test_mapped(&im);
	test_flips(&im, ".debug_info", 1500);
	test_flips(&im, ".debug_abbrev", 1500);
	test_truncated(&im);
	fi_image_close(&im);
	return fi_check_exit();
}
