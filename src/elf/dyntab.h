/* SPDX-License-Identifier: MIT */
/*
 * A dynamic section's tags, read into a table in one walk (dyntab.c):
 * the one reader of a loaded module's _DYNAMIC for livedyn.c, imgindex.c,
 * the early start (load/early.c), the RTLD_DEEPBIND rebinding
 * (interpose/sigbind.c) and the LD_AUDIT library (load/audit.c, which
 * compiles it in). It calls nothing, not even libc: the early start runs
 * it before libc is initialised, while functions libfineibt.so imports
 * may still be bound to unrelocated code, and the auditor while the
 * loader maps the program.
 */
#ifndef FI_DYNTAB_H
#define FI_DYNTAB_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A slot per tag, a bit of a mask each (FI_DT()): the generic tags below
 * FI_DT_STD at their own number, then the sixteen of the OS range from
 * DT_VERSYM up (DT_RELACOUNT, DT_FLAGS_1, the version tables), then
 * DT_GNU_HASH.
 */
enum fi_dt {
	FI_DT_NEEDED = DT_NEEDED,	/* the list below, not a value */
	FI_DT_PLTRELSZ = DT_PLTRELSZ,
	FI_DT_HASH = DT_HASH,
	FI_DT_STRTAB = DT_STRTAB,
	FI_DT_SYMTAB = DT_SYMTAB,
	FI_DT_RELA = DT_RELA,
	FI_DT_RELASZ = DT_RELASZ,
	FI_DT_RELAENT = DT_RELAENT,
	FI_DT_SONAME = DT_SONAME,
	FI_DT_REL = DT_REL,
	FI_DT_JMPREL = DT_JMPREL,
	FI_DT_PREINIT_ARRAYSZ = DT_PREINIT_ARRAYSZ,
	FI_DT_STD = 38,			/* DT_RELRENT + 1 */
	FI_DT_VERSYM = FI_DT_STD,
	FI_DT_RELACOUNT = FI_DT_VERSYM + (DT_RELACOUNT - DT_VERSYM),
	FI_DT_VERDEF = FI_DT_VERSYM + (DT_VERDEF - DT_VERSYM),
	FI_DT_VERDEFNUM = FI_DT_VERSYM + (DT_VERDEFNUM - DT_VERSYM),
	FI_DT_GNU_HASH = FI_DT_VERSYM + 16,
	FI_DT_NSLOTS,
};

#define FI_DT(t)	(1ull << FI_DT_##t)
/* DT_NEEDED entries kept; more are counted. */
#define FI_DT_NEEDED_MAX 8

struct fi_dyntab {
	uint64_t has;			/* FI_DT() of each tag asked and found */
	uintptr_t v[FI_DT_NSLOTS];	/* the last entry's: d_ptr biased, d_val as is */
	size_t nneeded;			/* DT_NEEDED entries (when asked), even past the array */
	uintptr_t needed[FI_DT_NEEDED_MAX];	/* the first ones' d_val, in order */
};

/*
 * glibc relocates the d_ptr of a writable .dynamic in place (ld.so's own
 * before it starts), not those of a read-only one: take either.
 */
static inline uintptr_t fi_dyn_ptr(uintptr_t bias, uintptr_t v)
{
	return v >= bias ? v : bias + v;
}

/*
 * Read the entries of @dyn (@max at most, up to DT_NULL; NULL: none) of a
 * module loaded at @bias, keeping the tags of @want (FI_DT() bits): the
 * value of the last entry of each, the first FI_DT_NEEDED_MAX DT_NEEDED.
 * What the module's tables mean, and whether they are mapped, is the
 * caller's to check.
 */
void fi_dyn_read(const ElfW(Dyn) *dyn, size_t max, uintptr_t bias,
		 uint64_t want, struct fi_dyntab *t);

/* Tag @i's value in @t, 0 if it was not found. */
static inline uintptr_t fi_dyn_get(const struct fi_dyntab *t, enum fi_dt i)
{
	return t->has & (1ull << i) ? t->v[i] : 0;
}

/* The hash of a symbol's name in a DT_GNU_HASH table (the dynamic
 * section's own lookup: livedyn.c, the auditor, the export check
 * in rtcoarse.c). */
static inline uint32_t fi_gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

#endif /* FI_DYNTAB_H */
