// SPDX-License-Identifier: MIT
/*
 * dlopen() interposer of libfineibt.so: after the real dlopen returns,
 * rewrite every module it loaded that is not rewritten yet.
 *
 * Modules linked by fineibt-cc do not need this: their crt hook rewrites
 * them before their constructors run. This covers kCFI libraries built
 * without fineibt-cc (a program started with `fineibt run`), at a price:
 * their constructors have already run in compiler (kCFI) form. See
 * docs/runtime.md, "Late modules".
 *
 * Exported as dlopen@GLIBC_2.34 (src/libfineibt.map), the version every
 * program linked against glibc >= 2.34 references, so that the reference
 * binds here when libfineibt precedes libc in the lookup order (it does:
 * fineibt-cc links it before libc; LD_PRELOAD puts it first).
 */
#include <dlfcn.h>
#include <stddef.h>

#define FI_EXPORT	__attribute__((visibility("default")))

typedef void *(*fi_dlopen_fn)(const char *, int);

/* runtime.c; weak so that linking libfineibt.a never pulls the runtime in
 * through this file alone. */
void fineibt_rt_hook(void) __attribute__((weak));

static fi_dlopen_fn fi_real_dlopen;

FI_EXPORT void *dlopen(const char *file, int mode)
{
	fi_dlopen_fn f = __atomic_load_n(&fi_real_dlopen, __ATOMIC_ACQUIRE);
	void *h;

	if (!f) {
		f = (fi_dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
		if (!f)
			return NULL;
		__atomic_store_n(&fi_real_dlopen, f, __ATOMIC_RELEASE);
	}
	h = f(file, mode);
	if (h && fineibt_rt_hook)
		fineibt_rt_hook();
	return h;
}

/* This dlopen, whatever the process's lookup order binds the name to
 * (dlsym_so.c points kCFI modules' GOT slots here). */
void *fi_dlopen_local(const char *file, int mode)
	__attribute__((alias("dlopen"), visibility("hidden")));
