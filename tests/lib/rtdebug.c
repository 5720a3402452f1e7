/* SPDX-License-Identifier: MIT */
/*
 * Test-only, never in the shipped library (docs/protection.md): the address of a
 * protected object of the runtime state, so that tests/e2e/protect_write.sh
 * can write to the real object and show that the write faults, and
 * protect_escape's mapfull can check that none stays writable. Built by
 * `make check` into $(BUILD)/testlib/: libfineibt.so with this export
 * (the tests run against it through LD_LIBRARY_PATH) and rtdebug.o (linked
 * into the -static-fineibt test program). The objects are read-only and
 * their addresses are in the library's symbol table anyway; the key's
 * value is never returned.
 *
 * Names: mode, flags, key, active, sealed, nmods, mods, stubs,
 * stub_copies, sigill (the program's saved SIGILL handler), sigill_installed,
 * arena (its chunk table), and, of the first registered module: module,
 * module_flags (its warn flag decides fatal or not), module_path,
 * module_views, module_traps, module_funcs, module_arity, module_sample
 * (the sites its fingerprint reads), module_syms,
 * module_symname (the bytes of a symbol name). "writable" is an ordinary
 * writable word, the tests' control that a write which does not fault is
 * seen as such.
 */
#include <string.h>

#include "runtime.h"
#include "symfile.h"

static const struct fi_module *fi_debug_first(const struct fi_runtime *rt)
{
	for (size_t i = 0; i < rt->nmods; i++) {
		if (rt->mods[i] && rt->mods[i]->img.path &&
		    strcmp(rt->mods[i]->img.path, "[jit]"))
			return rt->mods[i];
	}
	return NULL;
}

/* A module read from memory loads its symbols when first asked. */
static const struct fi_sym *fi_debug_syms(const struct fi_image *im)
{
	const struct fi_sym *syms = im->syms;
	size_t n = im->nsyms;

	if (!n && im->lazy_syms)
		fi_symfile_get(im, &syms, &n);
	return n ? syms : NULL;
}

static const void *fi_debug_module(const struct fi_module *m, const char *n)
{
	const struct fi_image *im = &m->img;

	if (!strcmp(n, "module"))
		return m;
	if (!strcmp(n, "module_flags"))
		return &m->cfg.flags;
	if (!strcmp(n, "module_path"))
		return im->path;
	if (!strcmp(n, "module_views"))
		return im->views;
	/* The module's own .kcfi_traps when read in place (read-only). */
	if (!strcmp(n, "module_traps"))
		return im->ktraps ? (const void *)im->ktraps : im->traps;
	if (!strcmp(n, "module_funcs"))
		return m->func_off;
	if (!strcmp(n, "module_arity"))
		return m->func_arity;
	if (!strcmp(n, "module_sample"))
		return m->fp_site;
	if (!strcmp(n, "module_syms"))
		return fi_debug_syms(im);
	if (!strcmp(n, "module_symname"))
		return fi_debug_syms(im) ? fi_debug_syms(im)[0].name : NULL;
	return NULL;
}

static int fi_debug_writable;

__attribute__((visibility("default")))
const void *fineibt_debug_object(const char *name)
{
	const struct fi_runtime *rt = fi_rt();
	const struct fi_module *m;
	static const struct { const char *name; size_t off; } fields[] = {
		{ "state", 0 },
		{ "mode", offsetof(struct fi_runtime, cfg.mode) },
		{ "flags", offsetof(struct fi_runtime, cfg.flags) },
		{ "key", offsetof(struct fi_runtime, key) },
		{ "active", offsetof(struct fi_runtime, active) },
		{ "sealed", offsetof(struct fi_runtime, sealed) },
		{ "mods", offsetof(struct fi_runtime, mods) },
		{ "stubs", offsetof(struct fi_runtime, stubs) },
		{ "stub_copies", offsetof(struct fi_runtime, stub_copies) },
		{ "sigill", offsetof(struct fi_runtime, sig.user_act) },
		{ "sigill_installed", offsetof(struct fi_runtime, sig.installed) },
		{ "arena", offsetof(struct fi_runtime, arena) },
		{ "nmods", offsetof(struct fi_runtime, nmods) },
		{ "nseen", offsetof(struct fi_runtime, nseen) },
		{ "seen", offsetof(struct fi_runtime, seen) },
		{ "veneer_base", offsetof(struct fi_runtime, foreign.fven_base) },
		{ "veneer_names", offsetof(struct fi_runtime, foreign.fven_names) },
		{ "stub_pages", offsetof(struct fi_runtime, foreign.stub_pages) },
		{ "real_sigaction", offsetof(struct fi_runtime, sig.real_sigaction) },
		{ "real_dlopen", offsetof(struct fi_runtime, calls.real_dlopen) },
		{ "print", offsetof(struct fi_runtime, calls.print) },
		{ "jit", offsetof(struct fi_runtime, mods[FI_MAX_MODULES]) },
		{ "wr", offsetof(struct fi_runtime, wr) },
	};

	if (!name)
		return NULL;
	if (!strcmp(name, "writable"))
		return &fi_debug_writable;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!strcmp(name, fields[i].name))
			return (const char *)rt + fields[i].off;
	}
	if (strncmp(name, "module", 6) || !(m = fi_debug_first(rt)))
		return NULL;
	return fi_debug_module(m, name);
}

/* --------------------------------------------- the writer's park hook */

/*
 * Test builds only (docs/protection.md, "Writing the state through the
 * kernel"): the runtime parks the writing thread here
 * inside every window ("window"), before every put of a record built in
 * writable scratch ("put", or "put module" for a registered module's
 * copy, with the scratch: what it is about to write)
 * and inside every check of a record where it landed ("verify"), so that
 * tests/e2e/protect_trust.sh's attacker thread writes at leisure while
 * the writer waits. Never in an AT_SECURE process. The shipped library's
 * fi_rt_park does nothing (src/rt/rtwrite.c).
 */
#include "rawspawn.h"
#include <stdlib.h>
#include <sys/auxv.h>

typedef void (*fineibt_debug_park_fn)(const char *where, const void *scratch,
				      size_t len);
static fineibt_debug_park_fn fi_debug_park_fn;

__attribute__((visibility("default")))
void fineibt_debug_park(fineibt_debug_park_fn fn)
{
	__atomic_store_n(&fi_debug_park_fn, fn, __ATOMIC_RELEASE);
}

/*
 * FINEIBT_TEST_SPAWN_AT_WINDOW=1: the first window starts a second task
 * sharing the address space (a raw clone that only pauses; the process's
 * exit_group ends it), so that start-up's later windows find the process
 * no longer alone (tests/e2e/rt_inplace.sh: a block held writable across
 * the rewrite is sealed as the next window opens).
 */
static char fi_debug_spawn_stack[16384] __attribute__((aligned(16)));

static void fi_debug_spawn(void)
{
	static bool done;
	const char *v;

	if (done || getauxval(AT_SECURE))
		return;
	done = true;
	v = getenv("FINEIBT_TEST_SPAWN_AT_WINDOW");
	if (!v || strcmp(v, "1"))
		return;
	(void)fi_test_spawn_paused(fi_debug_spawn_stack +
				   sizeof(fi_debug_spawn_stack));
}

void fi_rt_park(const char *where, const void *scratch, size_t len)
{
	fineibt_debug_park_fn fn = __atomic_load_n(&fi_debug_park_fn,
						   __ATOMIC_ACQUIRE);

	if (!strcmp(where, "window"))
		fi_debug_spawn();
	if (fn && !getauxval(AT_SECURE))
		fn(where, scratch, len);
}

/* FINEIBT_TEST_NOPROCMEM=1: /proc/self/mem "cannot be opened". */
bool fi_rt_hook_no_procmem(void)
{
	const char *v = getauxval(AT_SECURE) ? NULL : getenv("FINEIBT_TEST_NOPROCMEM");

	return v && *v && strcmp(v, "0");
}

/*
 * Every range of the runtime's protected memory (the state, its owner
 * token, each arena chunk: the module records, the JIT table's records,
 * the compiled trap lists; each region of fi_rt_map_protected: the dlsym
 * veneer names), at most @max into @out; how many there are. And how the
 * state is written (FI_RT_KERNEL 1, FI_RT_WINDOWS 2) in @how.
 */
struct fineibt_debug_range {
	const void *base;
	size_t size;
	const char *what;
};

__attribute__((visibility("default")))
size_t fineibt_debug_ranges(struct fineibt_debug_range *out, size_t max,
			    int *how)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = 0, size;
	const void *st = fi_rt_storage(&size);

#define FI_DEBUG_ADD(b, s, w) do {					\
		if (n < max)						\
			out[n] = (struct fineibt_debug_range){ (b), (s), (w) }; \
		n++;							\
	} while (0)
	if (how)
		*how = rt->wr.how;
	FI_DEBUG_ADD(st, size + 4096, "state");
	for (size_t i = 0; i < rt->arena.nchunks && i < FI_ARENA_CHUNKS; i++)
		FI_DEBUG_ADD(rt->arena.chunk[i].base, rt->arena.chunk[i].size, "arena");
	for (size_t i = 0; i < rt->wr.nregions && i < FI_RT_REGIONS; i++)
		FI_DEBUG_ADD((const void *)(uintptr_t)rt->wr.region[i].base,
			     rt->wr.region[i].size, "region");
#undef FI_DEBUG_ADD
	return n;
}
