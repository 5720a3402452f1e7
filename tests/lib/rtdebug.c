/* SPDX-License-Identifier: MIT */
/*
 * Test-only, never in the shipped library (issue 18): the address of a
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
		{ "mode", offsetof(struct fi_runtime, cfg.mode) },
		{ "flags", offsetof(struct fi_runtime, cfg.flags) },
		{ "key", offsetof(struct fi_runtime, key) },
		{ "active", offsetof(struct fi_runtime, active) },
		{ "sealed", offsetof(struct fi_runtime, sealed) },
		{ "nmods", offsetof(struct fi_runtime, nmods) },
		{ "mods", offsetof(struct fi_runtime, mods) },
		{ "stubs", offsetof(struct fi_runtime, stubs) },
		{ "stub_copies", offsetof(struct fi_runtime, stub_copies) },
		{ "sigill", offsetof(struct fi_runtime, sig.user_act) },
		{ "sigill_installed", offsetof(struct fi_runtime, sig.installed) },
		{ "arena", offsetof(struct fi_runtime, arena) },
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
