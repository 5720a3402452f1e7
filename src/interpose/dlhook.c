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
 *
 * libc's dlopen is called through a pointer, unchecked (this file is not
 * instrumented): the pointer lives in the read-only runtime state
 * (fi_rt()->calls), written once, inside a write window, so that no write
 * to writable memory can choose what the next dlopen() calls.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "ctor.h"
#include "interpose.h"
#include "livedyn.h"
#include "load.h"
#include "runtime.h"

#define FI_EXPORT	__attribute__((visibility("default")))

typedef void *(*fi_dlopen_fn)(const char *, int);

/* load.h's (src/load/start.c); weak here so that linking libfineibt.a
 * (the CLI, the unit tests) never pulls the runtime in through this file
 * alone. */
void fineibt_rt_hook(void) __attribute__((weak));
void fi_rt_plt_pass(void) __attribute__((weak));

/* libc's dlopen, resolved once and recorded in the read-only state. */
static fi_dlopen_fn fi_real_dlopen(void)
{
	void *f = __atomic_load_n(&fi_rt()->calls.real_dlopen, __ATOMIC_ACQUIRE);
	const struct fi_runtime *rt;
	sigset_t saved;

	if (f)
		return (fi_dlopen_fn)f;
	/* The modules' hash tables when they settle it (livedyn.c). */
	f = fi_livedyn_next("dlopen");
	if (!f)
		f = dlsym(RTLD_NEXT, "dlopen");
	if (!f)
		return NULL;
	rt = fi_rt_write_begin(&saved);
	if (rt) {
		if (!rt->calls.real_dlopen)
			FI_RT_PUT(rt->calls.real_dlopen, f);
		f = rt->calls.real_dlopen ? rt->calls.real_dlopen : f;
		fi_rt_write_end(&saved);
	}
	return (fi_dlopen_fn)f;
}

/* Start-up's last window resolves it (src/load/start.c, through the
 * variant's table), sparing one of its own. */
void fi_dlhook_prime(void)
{
	fi_real_dlopen();
}

/*
 * Resolved at load time, before the state is sealed, where possible. A
 * runtime that has not started yet resolves it in start-up's last window
 * (fi_dlhook_prime): no window of its own here then. After an early
 * start (before libc was initialised) it is done here.
 */
__attribute__((constructor(FI_CTOR_DLHOOK))) static void fi_dlhook_resolve(void)
{
	if (fi_rt()->sealed)
		fi_real_dlopen();
}

FI_EXPORT void *dlopen(const char *file, int mode)
{
	fi_dlopen_fn f = fi_real_dlopen();
	void *h;

	if (!f)
		return NULL;
	h = f(file, mode);
	/* Deep-bound: its sigaction & co. are libc's (sigbind.c). */
	if (h && (mode & RTLD_DEEPBIND))
		fi_sigbind_rebind(h);
	if (h && fineibt_rt_hook)
		fineibt_rt_hook();
	/* Its modules are relocated now: their PLTs (src/interpose/plt.c). */
	if (h && fi_rt_plt_pass)
		fi_rt_plt_pass();
	return h;
}

/* This dlopen, whatever the process's lookup order binds the name to
 * (dlsym_so.c points kCFI modules' GOT slots here). */
void *fi_dlopen_local(const char *file, int mode)
	__attribute__((alias("dlopen"), visibility("hidden")));
