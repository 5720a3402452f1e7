/* SPDX-License-Identifier: MIT */
/*
 * A loaded module's dynamic section, read from memory (livedyn.c): its
 * symbols, relocations and RELRO range, and a store into one of its
 * pointer slots (the binding passes store through rt/rtlive.h's
 * fi_live_store_slot).
 */
#ifndef FI_LIVEDYN_H
#define FI_LIVEDYN_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fi_livedyn {
	const ElfW(Sym) *sym;
	const char *str;
	const ElfW(Rela) *rel[2];	/* DT_RELA, DT_JMPREL */
	size_t nrel[2];
	size_t nrelative;	/* DT_RELACOUNT: R_X86_64_RELATIVE lead rel[0] */
	uintptr_t relro_lo, relro_hi;
};

/* Read @info's dynamic section; false without symbols and strings. */
bool fi_livedyn_read(const struct dl_phdr_info *info, struct fi_livedyn *d);

/* Store @to in the pointer slot @slot of @d's module, a RELRO page opened
 * for the store only: the fallback of fi_live_store_slot (rt/rtlive.h)
 * where the state is written through windows; a racing thread can write
 * the page meanwhile. */
void fi_livedyn_store(const struct fi_livedyn *d, void **slot, void *to);

/*
 * What dlsym(RTLD_NEXT, @name) called from this object (libfineibt.so,
 * or the executable holding the static runtime) returns, answered from
 * the loaded modules' own hash tables when the answer is certain: this
 * object loaded at start-up, one namespace (no auditor, no dlmopen), no
 * LD_DYNAMIC_WEAK, and the first definition after this object, at or
 * before libc, an ordinary one (livedyn.c says which). NULL otherwise,
 * and for a name not found by libc: ask dlsym. Costs a hash probe per
 * module instead of dlsym's ~1k instructions; no lock, no allocation:
 * the loader's chain of link maps and each module's dynamic section,
 * hash table and symbols, as dlsym reads them.
 */
void *fi_livedyn_next(const char *name);

/*
 * What dlvsym(RTLD_NEXT, @name, @ver) would return, from the same tables
 * under the same conditions: the definition of version @ver (hidden or
 * not: glibc's compat symbols) in the first module after this object
 * that defines one. NULL when the tables do not settle it; unlike
 * fi_livedyn_next, the caller does not ask libc then: a failed dlvsym
 * allocates its error message (libc's malloc, during the early start:
 * src/load/alloc.c).
 */
void *fi_livedyn_next_ver(const char *name, const char *ver);

#endif /* FI_LIVEDYN_H */
