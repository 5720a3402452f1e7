// SPDX-License-Identifier: MIT
/*
 * dlsym()/dlvsym() of the static runtime (-static-fineibt): fineibt-cc
 * links the executable with -Wl,--wrap=dlsym,--wrap=dlvsym, so that the
 * executable's own lookups come here. A lookup of libc's sigaction (or
 * another SIGILL-installing entry, signals.c) gets the interposer
 * instead: dlsym(RTLD_NEXT, "sigaction") from the executable finds libc's,
 * since the interposers live in the executable itself. Every other
 * lookup is a tail call, so libc still sees the real caller (RTLD_NEXT).
 *
 * Unreferenced (not pulled out of libfineibt.a) unless --wrap asks for
 * it. Lookups from shared libraries are not wrapped (docs/traps.md).
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "interpose.h"

#define FI_EXPORT	__attribute__((visibility("default")))

void *__real_dlsym(void *, const char *);
void *__real_dlvsym(void *, const char *, const char *);

static bool fi_maybe_sig(const char *name)
{
	return name && strstr(name, "sig") && fi_sig_own(name);
}

FI_EXPORT void *__wrap_dlsym(void *handle, const char *name)
{
	if (fi_maybe_sig(name))
		return fi_sig_entry(name, __real_dlsym(handle, name));
	__attribute__((musttail)) return __real_dlsym(handle, name);
}

FI_EXPORT void *__wrap_dlvsym(void *handle, const char *name, const char *version)
{
	if (fi_maybe_sig(name))
		return fi_sig_entry(name, __real_dlvsym(handle, name, version));
	__attribute__((musttail)) return __real_dlvsym(handle, name, version);
}
