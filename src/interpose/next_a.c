// SPDX-License-Identifier: MIT
/*
 * The static runtime's fi_next_libc (libfineibt.a only; dlsym_so.c has
 * the shared one): its object is the executable, so dlsym(RTLD_NEXT)
 * from here is what the executable's own lookup finds, through the
 * executable's dlsym (dlsym_a.c's wrapper when the link wraps it), asked
 * only when the modules' hash tables leave the answer open. A fully
 * static executable has neither: NULL.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "interpose.h"
#include "livedyn.h"

void *fi_next_libc(const char *name)
{
	void *p = fi_livedyn_next(name);

	return p ? p : dlsym(RTLD_NEXT, name);
}
