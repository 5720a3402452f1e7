// SPDX-License-Identifier: MIT
/*
 * dlsym()/dlvsym() interposers of libfineibt.so (foreign.c, docs/compat.md):
 * what libc finds for an uninstrumented function is handed out as a veneer.
 *
 * Exported as dlsym@GLIBC_2.34 and dlvsym@GLIBC_2.34 (libfineibt.map);
 * libc's own are reached through their GLIBC_2.2.5 compat versions, which
 * we do not define. Only in the shared runtime (the Makefile leaves this
 * file out of libfineibt.a): an executable that defined dlsym itself
 * would bind that compat reference back to its own definition.
 *
 * Only callers in a kCFI module get veneers: uninstrumented code (a GL
 * loader, an interpreter's FFI) calls without checks and may hand the
 * pointer to dladdr(), which knows nothing of veneers. Those calls, and
 * RTLD_NEXT (which depends on who calls; an interposer's "next" is rarely
 * called through kCFI), are tail calls to libc's, so that glibc still
 * sees the real caller's return address.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "foreign.h"
#include "trap.h"

#define FI_EXPORT	__attribute__((visibility("default")))

extern void *fi_libc_dlsym(void *, const char *);
extern void *fi_libc_dlvsym(void *, const char *, const char *);
__asm__(".symver fi_libc_dlsym, dlsym@GLIBC_2.2.5");
__asm__(".symver fi_libc_dlvsym, dlvsym@GLIBC_2.2.5");

/* Names of the functions src/trap.c interposes for SIGILL start "s"/"_"/"b". */
static bool fi_maybe_sig(const char *name)
{
	return name && (name[0] == 's' || name[0] == '_' || name[0] == 'b') &&
	       strstr(name, "sig");
}

/* A kCFI caller gets a veneer of whichever it is. */
static void *fi_sig_wrap(void *p, const char *name, const void *ret)
{
	p = fi_trap_sig_entry(name, p);
	return fi_foreign_for_caller(ret) ? fi_foreign_wrap(p, name) : p;
}

FI_EXPORT void *dlsym(void *handle, const char *name)
{
	/* libc's own sigaction & co. found past libfineibt: ours instead. */
	if (fi_maybe_sig(name))
		return fi_sig_wrap(fi_libc_dlsym(handle, name), name,
				   __builtin_return_address(0));
	if (handle == RTLD_NEXT ||
	    !fi_foreign_for_caller(__builtin_return_address(0)))
		__attribute__((musttail)) return fi_libc_dlsym(handle, name);
	return fi_foreign_wrap(fi_libc_dlsym(handle, name), name);
}

FI_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	if (fi_maybe_sig(name))
		return fi_sig_wrap(fi_libc_dlvsym(handle, name, version), name,
				   __builtin_return_address(0));
	if (handle == RTLD_NEXT ||
	    !fi_foreign_for_caller(__builtin_return_address(0)))
		__attribute__((musttail)) return fi_libc_dlvsym(handle, name, version);
	return fi_foreign_wrap(fi_libc_dlvsym(handle, name, version), name);
}
