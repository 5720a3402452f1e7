/* SPDX-License-Identifier: MIT */
/*
 * load/: start-up and the module walk (docs/architecture.md). What its
 * files define for each other and for the layers above: how the runtime
 * starts (fineibt_rt_hook and the three ways in: a constructor, the
 * loader's relocation of libfineibt.so, a static executable's
 * DT_PREINIT_ARRAY), the walk over the loaded modules that patches and
 * registers them, and the early start's allocator. rt/ (runtime.h) is the
 * process state they write, never writable itself; load/ is the code that
 * fills it, run at start-up and at each dlopen, never by the SIGILL
 * handler. cacheuse.h is load/'s other header: the shared text cache as
 * the walk uses it, for start.c alone.
 */
#ifndef FI_LOAD_H
#define FI_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "fineibt.h"
#include "runtime.h"

/*
 * start.c: patch every module not patched yet, starting the runtime
 * first if needed. Called by each module's crt hook (before its
 * constructors), by libfineibt.so's constructor, by the static runtime's
 * preinit entry and after each dlopen (src/interpose/dlhook.c). Exported
 * from libfineibt.so, so the crt of other modules finds it.
 */
FINEIBT_API void fineibt_rt_hook(void);

/*
 * start.c: the PLT's direct entries (src/interpose/plt.c) over every kCFI
 * module recorded, where their slots may be bound: the runtime's
 * constructor, and after each dlopen (src/interpose/dlhook.c).
 */
void fi_rt_plt_pass(void);

/*
 * start.c: start the runtime from the loader's relocation of
 * libfineibt.so, before any constructor runs (early.c): every module is
 * mapped, not all are relocated yet. @unrun: no code of the program has
 * run (early.c), so the first window may write the state in place.
 */
void fi_rt_start_early(bool unrun);
/*
 * The front of the scan's scratch (start.c), the page of it every scan
 * writes, faulted in by one system call (early.c, libfineibt.so's first
 * code, when it maps the pages every start touches).
 */
void fi_rt_scan_prefault(void);

/*
 * early.c (libfineibt.so only): did the early check sample module @f and
 * find no kCFI, with @subs modules unloaded so far as then? For the first
 * scan only: fi_early_forget() ends it once start-up is over. Called
 * through the variant's table (src/rt/variant.h): the static runtime has
 * no early check.
 */
bool fi_early_said_plain(const struct fi_rt_found *f, unsigned long long subs);
void fi_early_forget(void);
/*
 * early.c: at libfineibt.so's constructor, before the first start: has no
 * code of the program run yet, and can none run inside start-up's first
 * window? (src/rt/rtwrite.c, fi_rt_first_unrun.)
 */
bool fi_early_first_unrun(void);

/*
 * preinit.c (libfineibt.a only): the static runtime's start, an entry in
 * the executable's DT_PREINIT_ARRAY (fineibt-cc links it with
 * -u fi_rt_preinit).
 */
void fi_rt_preinit(int argc, char **argv, char **envp);

/*
 * alloc.c (libfineibt.so only, linked with --wrap): between the two, the
 * runtime's malloc & co. use private pools instead of libc's malloc (the
 * early start).
 */
void fi_alloc_private_begin(void);
void fi_alloc_private_end(void);
/* What the runtime took from libc's heap so far (start.c reaches it
 * through the variant's table: the static runtime has no alloc.c). */
size_t fi_alloc_libc_bytes(void);
/* ownlibc.c: while @on, getenv answers FINEIBT_* from one walk over the
 * environment (start.c brackets the first start with it, through the
 * variant's table: the static runtime has no ownlibc.c). */
void fi_env_startup(bool on);

/* pltwalk.c: one PLT pass over every loaded module, under the runtime's
 * lock (start.c says when it may run: fi_rt_plt_pass, and start-up's
 * last window, fi_rt_links_close). */
void fi_plt_walk(bool startup);

#endif /* FI_LOAD_H */
