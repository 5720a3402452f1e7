/* SPDX-License-Identifier: MIT */
/*
 * Function pointers into uninstrumented code: dlsym veneers, opened sites
 * (foreign.c), a part of interpose.h. What the layers below call here is
 * declared in src/rt/upcall.h.
 */
#ifndef FI_FOREIGN_H
#define FI_FOREIGN_H

#include <stdbool.h>
#include <stdint.h>

#include "upcall.h"

/*
 * What dlsym/dlvsym return for @p, the address libc's found for @name:
 * a veneer when @p is code in a module that is not kCFI and @name is no
 * indirect-branch thunk, coarse check, BHI stub array or control-flow
 * primitive (longjmp, setcontext and kin), else @p.
 */
void *fi_foreign_wrap(void *p, const char *name);
/*
 * The loaded object holding @p (any namespace) and, in @base, its load
 * base as dladdr's dli_fbase gives it; NULL when none. No symbol search.
 */
struct link_map *fi_foreign_object_at(const void *p, const void **base);
/* Does a dlsym called from return address @ret hand out veneers (a kCFI caller)? */
bool fi_foreign_for_caller(const void *ret);

/*
 * Another rewriter of live text pages (plt.c) takes the flag the
 * handler opens sites under, so that neither moves a copy of a page over
 * the other's change. Call with every signal blocked (the handler never
 * waits for it; this does).
 */
void fi_foreign_text_lock(void);
void fi_foreign_text_unlock(void);

#endif
