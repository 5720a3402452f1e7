/* SPDX-License-Identifier: MIT */
/* Function pointers into uninstrumented code: dlsym veneers, opened sites (foreign.c). */
#ifndef FI_FOREIGN_H
#define FI_FOREIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "trapinfo.h"

/*
 * What dlsym/dlvsym return for @p, the address libc's found for @name:
 * a veneer when @p is code in a module that is not kCFI, else @p.
 */
void *fi_foreign_wrap(void *p, const char *name);
/*
 * The loaded object holding @p (any namespace) and, in @base, its load
 * base as dladdr's dli_fbase gives it; NULL when none. No symbol search.
 */
struct link_map *fi_foreign_object_at(const void *p, const void **base);
/* Is @addr code of a loaded object that is no kCFI module (the runtime active)? */
bool fi_foreign_is_code(uint64_t addr);
/* Does a dlsym called from return address @ret hand out veneers (a kCFI caller)? */
bool fi_foreign_for_caller(const void *ret);

/* Is @addr the entry of a published dlsym veneer? Signal-safe. */
bool fi_foreign_is_veneer(uint64_t addr);
/* The function a veneer entry @addr jumps to, or 0. Signal-safe. */
uint64_t fi_foreign_veneer_target(uint64_t addr);
/* The same for any @addr inside a published slot; its entry in @entry. */
uint64_t fi_foreign_slot_target(uint64_t addr, uint64_t *entry);

/*
 * For reports: the function dlsym was asked for whose (real) address is
 * nearest at or below @addr, above @after and within 64 KiB: its address
 * in @start and the name asked for in @name. Signal-safe.
 */
bool fi_foreign_name_near(uint64_t addr, uint64_t after, uint64_t *start,
			  const char **name);

/*
 * From the SIGILL handler: @t (decoded, kcfi or paranoid) was a checking
 * caller meeting a veneer. Opens the site (per-site stub, see foreign.c)
 * unless another thread is doing so, and returns true: the caller lets
 * the call go on at t->resume, unreported; @opened says whether this
 * call opened the site. False: not such a trap.
 */
bool fi_foreign_take(const struct fi_trap *t, bool *opened);

/*
 * @bytes (at least 5, read from the call site at run-time @ip) jump to a
 * per-site stub: the stub, whose first instruction is the site's original
 * movl; else NULL. Pass a copy taken once, not the live site: another
 * thread may open the site between two reads of it (trap.c).
 */
const uint8_t *fi_foreign_site_head(const uint8_t *bytes, uint64_t ip);

/*
 * Another rewriter of live text pages (src/load/plt.c) takes the flag the
 * handler opens sites under, so that neither moves a copy of a page over
 * the other's change. Call with every signal blocked (the handler never
 * waits for it; this does).
 */
void fi_foreign_text_lock(void);
void fi_foreign_text_unlock(void);

/* How many call sites were opened so far (FINEIBT_VERBOSE, tests). */
uint64_t fi_foreign_sites_opened(void);

#endif
