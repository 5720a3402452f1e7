// SPDX-License-Identifier: MIT
/* An uninstrumented library (plain clang) that looks symbols up itself:
 * compat_dlsym checks that it gets libc's plain pointers, not veneers. */
#define _GNU_SOURCE
#include <dlfcn.h>

/*
 * Not a tail call: dlsym tells its callers apart by return address, and
 * a tail call from here would return straight into the instrumented
 * program (which would then rightly get a veneer; docs/compat.md).
 */
void *raw_dlsym(void *handle, const char *name)
{
	void *p = dlsym(handle, name);

	__asm__ volatile("" : "+r"(p));
	return p;
}
