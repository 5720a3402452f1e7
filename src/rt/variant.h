/* SPDX-License-Identifier: MIT */
#ifndef FI_VARIANT_H
#define FI_VARIANT_H

/*
 * What the shared and the static runtime each provide to the layers below
 * the interposers (docs/architecture.md, "Calls that go up"): one const
 * table per variant, src/interpose/variant_so.c (libfineibt.so) and
 * src/interpose/variant_a.c (libfineibt.a), the only calls from rt/,
 * trap/ and load/ into src/interpose/ and into the shared runtime's early
 * start (src/load/early.c). A NULL entry: the variant has no such part.
 *
 * The table is const and holds addresses, so the compiler puts it in
 * .data.rel.ro: read-only once the loader has relocated the object, under
 * RELRO (libfineibt.so is linked -z relro -z now; an executable that links
 * libfineibt.a has it under its own RELRO, the toolchain's default). The
 * runtime calls through it without a check, as through its GOT, once
 * start-up has asked the kernel that it is read-only (fi_variant_check).
 */
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

struct fi_variant {
	/* src/interpose/signals.c (both): the sigaction interposer (published
	 * for a dlmopen namespace's copy), the interposer of a name, and
	 * whether an address is one of them (the coarse check). */
	int (*sigaction)(int sig, const struct sigaction *act,
			 struct sigaction *old);
	void *(*sig_own)(const char *name);
	bool (*sig_is_own)(uint64_t addr);
	/* src/interpose/dlhook.c: libc's dlopen, resolved in start-up's last
	 * window (static runtime: only when the executable calls dlopen). */
	void (*dlopen_prime)(void);
	/* src/interpose/dlsym_so.c (shared only): kCFI modules' dlsym, dlvsym
	 * and dlopen slots bound to ours; what one such slot must hold. */
	bool (*bind_interposers)(void);
	void *(*bind_want)(const char *name);
	/* src/load/early.c (shared only): did the early check find module
	 * @f without kCFI (first scan only); end that once start-up is over. */
	bool (*early_said_plain)(const struct fi_rt_found *f,
				 unsigned long long subs);
	void (*early_forget)(void);
	/* src/load/early.c (shared only): at libfineibt.so's constructor,
	 * has no code of the program run, and can none run inside start-up's
	 * first window (fi_rt_first_unrun)? The static runtime cannot tell
	 * the program's own definitions of what it calls from libc's. */
	bool (*first_unrun)(void);
	/* The runtime is linked into the executable (libfineibt.a): its start
	 * is the executable's preinit entry (src/load/preinit.c), before main
	 * and before every constructor, never a dlopen's. */
	bool in_executable;
	/* src/load/alloc.c (shared only): the bytes the early start took from
	 * libc's malloc (heap trimming is worth it past a threshold). */
	size_t (*alloc_libc_bytes)(void);
	/* src/load/ownlibc.c (shared only): getenv answers FINEIBT_* from one
	 * walk over the environment while @on (the first start). */
	void (*env_startup)(bool on);
	/* src/interpose/dlsym_so.c, next_a.c (both): libc's answer to
	 * dlsym(RTLD_NEXT, @name) for the runtime's own object, without the
	 * dlsym interposer: from the modules' hash tables when certain
	 * (fi_livedyn_next), else libc's dlsym. trap.c's libc entries. */
	void *(*next_libc)(const char *name);
};

extern const struct fi_variant fi_variant;

/*
 * src/rt/rtvariant.c: stop the process (fi_rt_die) if the kernel maps any
 * byte of fi_variant writable (a -z norelro link of the static runtime);
 * without /proc, if it is outside its module's PT_GNU_RELRO. Asked once;
 * later calls return at once. Not during an early start (the loader has
 * not applied RELRO yet).
 */
void fi_variant_check(void);

#endif /* FI_VARIANT_H */
