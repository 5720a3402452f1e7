// SPDX-License-Identifier: MIT
/*
 * The shared runtime's earliest start (docs/runtime.md "Before
 * any constructor"): a kCFI library built without fineibt-cc (no crt
 * hook) that the program needs at start-up would run its constructors
 * in compiler form, before libfineibt.so's constructor: the loader
 * initialises a preload after the program's unrelated libraries, and
 * libraries in the order of their dependencies, not ours.
 *
 * Nothing of a module runs before every module is relocated, and the
 * loader relocates libfineibt.so after its dependencies (libc) and
 * before the modules that depend on it, the executable last. Its
 * IRELATIVE relocations come after all its others (glibc defers them to
 * the end, and -z now resolves the PLT first), so the resolver of an
 * IFUNC of ours runs with libfineibt.so and libc ready and no
 * constructor run yet, libc's included. There the runtime starts, if:
 *
 *  - some module without a module index (not linked by fineibt-cc) looks
 *    like kCFI code in memory, or the executable has DT_PREINIT_ARRAY
 *    functions: otherwise every kCFI module has a crt hook or runs after
 *    our constructor, and starting early would only cost (an unrelocated
 *    module's index cannot be read: its file is);
 *  - every function libfineibt.so calls is bound into one of its own
 *    dependencies (libc, the loader): an executable or preload that
 *    interposes malloc, getenv, strerror... is not relocated yet, its code
 *    cannot run. The start then waits for our constructor, as before.
 *
 * libc is relocated but not initialised: environ is not set yet (set
 * here to the same array its initialisation assigns: the initial
 * stack's envp) and the CPU model the compiler runtime fills in a
 * constructor is filled first. Binding kCFI modules' dlsym slots waits
 * for the constructor (start.c: their GOT may not be relocated).
 *
 * The resolver also runs when a dlopen is the first to bring
 * libfineibt.so in; the program has run by then (fi_early_initial).
 *
 * libfineibt.so only: a static executable applies IRELATIVE relocations
 * before its TLS exists. Not in sanitized builds (see below).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dyntab.h"
#include "imgindex.h"
#include "load.h"
#include "rawsys.h"
#include "runtime.h"

/* Sanitized builds (SAN=1): the sanitizer runtime is not set up before
 * its own constructors; start there, as before. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FI_EARLY_SANITIZED 1
#endif
#endif
#ifndef FI_EARLY_SANITIZED
#define FI_EARLY_SANITIZED 0
#endif

/* ld.so's: the initial stack (argc, argv..., NULL, envp..., NULL). */
extern void *__libc_stack_end;
extern char **environ;

#define FI_EARLY_DEPS	8	/* DT_NEEDED of libfineibt.so we look at */
#define FI_EARLY_PLAIN	16	/* modules remembered as not kCFI */

/*
 * The modules the check below found without kCFI (libc, the loader...),
 * so that the first scan, moments later in our constructor, does not
 * sample their code again (fi_live_maybe_kcfi reads 32 function entries
 * of each: about 1,000 instructions). Valid only while no module
 * was unloaded since (dlpi_subs): then a module at the same bias with
 * the same program headers is the same mapping.
 */
static struct {
	uint64_t bias;
	const void *phdr;
} fi_early_plain[FI_EARLY_PLAIN];
static size_t fi_early_nplain;
static unsigned long long fi_early_subs;
/* libfineibt.so's own load bias: built without kCFI (the Makefile's
 * -fno-sanitize=kcfi), never sampled. */
static uint64_t fi_early_own;
/* fi_early_bound_safely's answer for libfineibt.so, once asked: 1 or 0,
 * -1 before. Its slots are bound once, when the loader relocates it
 * (-z now), and read-only after (RELRO): the answer holds for the
 * constructor too (fi_early_first_unrun). */
static signed char fi_early_bound = -1;

static void fi_early_said(const struct dl_phdr_info *info)
{
	if (fi_early_nplain < FI_EARLY_PLAIN) {
		fi_early_plain[fi_early_nplain].bias = info->dlpi_addr;
		fi_early_plain[fi_early_nplain++].phdr = info->dlpi_phdr;
	}
	fi_early_subs = info->dlpi_subs;
}

/* The executable ranges of libfineibt.so's dependencies. */
struct fi_early_deps {
	const char *names[FI_EARLY_DEPS];
	size_t nnames;
	uint64_t lo[FI_EARLY_DEPS * 4], hi[FI_EARLY_DEPS * 4];
	size_t n;
};

/* No libc string functions: they may be interposed by unrelocated code. */
static bool fi_early_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

static const char *fi_early_base(const char *path)
{
	const char *b = path;

	for (; *path; path++) {
		if (*path == '/')
			b = path + 1;
	}
	return b;
}

/* Does the executable (@info) have DT_PREINIT_ARRAY functions? */
static bool fi_early_preinit(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct fi_dyntab t;

		if (ph->p_type != PT_DYNAMIC)
			continue;
		fi_dyn_read((const void *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr),
			    SIZE_MAX, info->dlpi_addr, FI_DT(PREINIT_ARRAYSZ), &t);
		if (fi_dyn_get(&t, FI_DT_PREINIT_ARRAYSZ))
			return true;
	}
	return false;
}

/*
 * Is there a module without an index that looks like kCFI code, or an
 * executable with DT_PREINIT_ARRAY functions (they run before every
 * constructor, the crt hook's and ours included)?
 */
static int fi_early_foreign_cb(struct dl_phdr_info *info, size_t size,
			       void *arg)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	bool slash = false;

	for (const char *p = name; *p && !slash; p++)
		slash = *p == '/';
	/* The vdso: no file, never kCFI. */
	if (name[0] && !slash)
		return 0;
	if (!name[0] && fi_early_preinit(info)) {
		*(bool *)arg = true;
		return 1;
	}
	/* libfineibt.so: linked without fineibt-cc, no index either. */
	if (fi_early_own && info->dlpi_addr == fi_early_own) {
		fi_early_said(info);
		return 0;
	}
	if (fi_index_find(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr))
		return 0;
	/* The executable keeps the sample of the functions it exports
	 * (usually none): under `fineibt run` a stock program's
	 * constructors run after ours and its preinit functions were
	 * looked at above; its unwind table would start every stock
	 * program early. */
	if (!(name[0] ? fi_live_maybe_kcfi : fi_live_exports_kcfi)(
		    info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr)) {
		fi_early_said(info);
		return 0;
	}
	*(bool *)arg = true;
	return 1;
}

bool fi_early_said_plain(const struct fi_rt_found *f, unsigned long long subs)
{
	if (subs != fi_early_subs)
		return false;
	for (size_t i = 0; i < fi_early_nplain && i < FI_EARLY_PLAIN; i++) {
		if (fi_early_plain[i].bias == f->bias &&
		    fi_early_plain[i].phdr == f->phdr)
			return true;
	}
	return false;
}

void fi_early_forget(void)
{
	fi_early_nplain = 0;
}

/*
 * The load ranges of the modules named in @d (libfineibt.so itself, its
 * DT_NEEDED and the loader), read from their ELF headers through the
 * loader's list of modules: no function call, since the very functions
 * that would list them (dl_iterate_phdr, dladdr1) are the ones a
 * sanitizer runtime in the executable intercepts, and its interceptors
 * crash when called before the sanitizer's own start (ThreadSanitizer's
 * dl_iterate_phdr, MemorySanitizer's dladdr1). A module whose ELF header
 * is not at its load bias (not a module of the usual layout) adds no
 * range: its slots then count as unsafe, and the start waits.
 */
static void fi_early_deps_add(struct fi_early_deps *d, const struct link_map *l)
{
	const ElfW(Ehdr) *eh = (const void *)(uintptr_t)l->l_addr;
	const ElfW(Phdr) *ph;

	if (!l->l_addr || eh->e_ident[EI_MAG0] != ELFMAG0 ||
	    eh->e_ident[EI_MAG1] != ELFMAG1 || eh->e_ident[EI_MAG2] != ELFMAG2 ||
	    eh->e_ident[EI_MAG3] != ELFMAG3 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > 4096)
		return;
	ph = (const void *)(uintptr_t)(l->l_addr + eh->e_phoff);
	/* Executable segments only: a bound slot holds a function's code
	 * address (fewer ranges for every slot to be compared with). */
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X) ||
		    d->n == FI_EARLY_DEPS * 4)
			continue;
		d->lo[d->n] = l->l_addr + ph[i].p_vaddr;
		d->hi[d->n++] = l->l_addr + ph[i].p_vaddr + ph[i].p_memsz;
	}
}

static void fi_early_deps_scan(struct fi_early_deps *d)
{
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		const char *base = fi_early_base(l->l_name ? l->l_name : "");
		bool dep = false;

		for (size_t i = 0; i < d->nnames; i++)
			dep |= fi_early_eq(base, d->names[i]);
		if (dep)
			fi_early_deps_add(d, l);
	}
}

static bool fi_early_in_deps(const struct fi_early_deps *d, uint64_t a)
{
	for (size_t i = 0; i < d->n; i++) {
		if (a >= d->lo[i] && a < d->hi[i])
			return true;
	}
	return false;
}

/*
 * Does every PLT slot of libfineibt.so (@lm) point into itself or into
 * one of its dependencies, all relocated before it?
 */
static bool fi_early_bound_safely(const struct link_map *lm)
{
	uint64_t b = lm->l_addr, jmprel, pltsz, strtab;
	struct fi_early_deps deps = {
		.names = { "ld-linux-x86-64.so.2" },
		.nnames = 1,
	};
	struct fi_dyntab t;

	/* One walk: the names come from the string table, wherever its
	 * entry lies. */
	fi_dyn_read(lm->l_ld, SIZE_MAX, b, FI_DT(JMPREL) | FI_DT(PLTRELSZ) |
		    FI_DT(STRTAB) | FI_DT(NEEDED), &t);
	jmprel = fi_dyn_get(&t, FI_DT_JMPREL);
	pltsz = fi_dyn_get(&t, FI_DT_PLTRELSZ);
	strtab = fi_dyn_get(&t, FI_DT_STRTAB);
	for (size_t i = 0; strtab && i < t.nneeded && i < FI_DT_NEEDED_MAX &&
			   deps.nnames < FI_EARLY_DEPS; i++)
		deps.names[deps.nnames++] =
			(const char *)(uintptr_t)(strtab + t.needed[i]);
	/* libfineibt.so itself by its entry, not by its name. */
	fi_early_deps_add(&deps, lm);
	fi_early_deps_scan(&deps);
	for (uint64_t off = 0; jmprel && off + sizeof(ElfW(Rela)) <= pltsz;
	     off += sizeof(ElfW(Rela))) {
		const ElfW(Rela) *r = (const void *)(uintptr_t)(jmprel + off);

		if (ELF64_R_TYPE(r->r_info) == R_X86_64_JUMP_SLOT &&
		    !fi_early_in_deps(&deps,
				      *(const uint64_t *)(uintptr_t)(b + r->r_offset)))
			return false;
	}
	return true;
}

/*
 * libfineibt.so's own entry in the loader's list of the initial namespace,
 * found by its dynamic section; NULL in another namespace, whose copy of
 * the runtime defers to the process's (src/rt/rtone.c) and starts from
 * its constructor, as before.
 */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

static const struct link_map *fi_early_self(void)
{
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		if (l->l_ld == _DYNAMIC)
			return l;
	}
	return NULL;
}

/*
 * Does the module at @l (not libfineibt.so, not one of its dependencies)
 * name libfineibt.so among its DT_NEEDED, by @soname or by the path the
 * loader found it at, @path (fineibt-cc links it by its full path)? The
 * loader then runs its constructors after ours. Only the first
 * FI_DT_NEEDED_MAX count: one named later is taken as not named.
 */
static bool fi_early_needs(const struct link_map *l, const char *soname,
			   const char *path, bool *preinit)
{
	struct fi_dyntab t;
	uintptr_t strtab;

	if (!l->l_ld)
		return false;
	fi_dyn_read(l->l_ld, SIZE_MAX, l->l_addr, FI_DT(NEEDED) | FI_DT(STRTAB) |
		    FI_DT(PREINIT_ARRAYSZ), &t);
	*preinit = fi_dyn_get(&t, FI_DT_PREINIT_ARRAYSZ) != 0;
	strtab = fi_dyn_get(&t, FI_DT_STRTAB);
	for (size_t i = 0; strtab && i < t.nneeded && i < FI_DT_NEEDED_MAX; i++) {
		const char *n = (const char *)(strtab + t.needed[i]);

		if (fi_early_eq(n, soname) || fi_early_eq(n, path))
			return true;
	}
	return false;
}

/* Is there an IRELATIVE relocation among @n entries at @r? */
static bool fi_early_irelative(const ElfW(Rela) *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++)
		if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_IRELATIVE)
			return true;
	return false;
}

/*
 * Has the module at @l code that the loader runs while it relocates,
 * before every constructor: an IFUNC's resolver, named by an IRELATIVE
 * relocation (a local IFUNC) or by an exported symbol of type
 * STT_GNU_IFUNC (another module's relocation against it calls it)? Such
 * code of the program could leave behind what acts inside start-up's
 * windows without being a second task: a signal handler and a timer
 * (found by attack: tests/e2e/protect_inplace.sh), an io_uring read
 * that completes in this thread. Tables that cannot be read whole count
 * as yes.
 */
static bool fi_early_has_ifunc(const struct link_map *l)
{
	struct fi_dyntab t;
	const ElfW(Sym) *sym;
	const uint32_t *h;
	size_t n, skip;

	if (!l->l_ld)
		return true;
	fi_dyn_read(l->l_ld, SIZE_MAX, l->l_addr, FI_DT(RELA) | FI_DT(RELASZ) |
		    FI_DT(RELACOUNT) | FI_DT(JMPREL) | FI_DT(PLTRELSZ) |
		    FI_DT(REL) | FI_DT(SYMTAB) | FI_DT(HASH) | FI_DT(GNU_HASH), &t);
	if (t.has & FI_DT(REL))
		return true;
	/* The leading R_X86_64_RELATIVE ones (DT_RELACOUNT) are skipped. */
	n = fi_dyn_get(&t, FI_DT_RELASZ) / sizeof(ElfW(Rela));
	skip = fi_dyn_get(&t, FI_DT_RELACOUNT) < n ? fi_dyn_get(&t, FI_DT_RELACOUNT) : n;
	if (fi_early_irelative((const ElfW(Rela) *)fi_dyn_get(&t, FI_DT_RELA) + skip,
			       n - skip) ||
	    fi_early_irelative((const ElfW(Rela) *)fi_dyn_get(&t, FI_DT_JMPREL),
			       fi_dyn_get(&t, FI_DT_PLTRELSZ) / sizeof(ElfW(Rela))))
		return true;
	sym = (const ElfW(Sym) *)fi_dyn_get(&t, FI_DT_SYMTAB);
	if (!sym)
		return false;
	if ((h = (const uint32_t *)fi_dyn_get(&t, FI_DT_GNU_HASH))) {
		/* Every defined exported symbol is on one bucket's chain. */
		uint32_t nb = h[0], off = h[1];
		const uint32_t *bucket = h + 4 + (size_t)h[2] * 2, *chain = bucket + nb;

		for (uint32_t b = 0; b < nb; b++) {
			if (bucket[b] < off)
				continue;	/* empty (0), or not a defined one */
			for (uint32_t i = bucket[b];; i++) {
				if (ELF64_ST_TYPE(sym[i].st_info) == STT_GNU_IFUNC &&
				    sym[i].st_shndx != SHN_UNDEF)
					return true;
				if (chain[i - off] & 1)
					break;
			}
		}
		return false;
	}
	if (!(h = (const uint32_t *)fi_dyn_get(&t, FI_DT_HASH)))
		return true;
	for (uint32_t i = 0; i < h[1]; i++)
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_GNU_IFUNC &&
		    sym[i].st_shndx != SHN_UNDEF)
			return true;
	return false;
}

/* Is there a link-map namespace besides the initial one (an audit
 * library's, a dlmopen's)? glibc 2.35 and later raise r_version to 2
 * when it adds the first; before, unknown: taken as yes. */
static bool fi_early_other_ns(void)
{
#if __GLIBC_PREREQ(2, 35)
	const struct r_debug_extended *r = (const void *)&_r_debug;

	return _r_debug.r_version >= 2 && r->r_next;
#else
	return true;
#endif
}

/*
 * Has no code of the program run, and can none run inside start-up's
 * first window? @early: asked by the early start (the executable not
 * relocated yet, and relocated last: its resolvers run after start-up;
 * no constructor has run, so only the modules' resolvers count); else
 * by libfineibt.so's constructor.
 */
static bool fi_early_unrun(bool early)
{
	const struct link_map *self = fi_early_self();
	struct fi_early_deps deps = {
		.names = { "ld-linux-x86-64.so.2" },
		.nnames = 1,
	};
	const char *soname;
	struct fi_dyntab t;
	uintptr_t strtab;

	if (FI_EARLY_SANITIZED || !self || fi_early_other_ns())
		return false;
	if (fi_early_bound < 0)
		fi_early_bound = fi_early_bound_safely(self);
	if (!fi_early_bound)
		return false;
	fi_dyn_read(self->l_ld, SIZE_MAX, self->l_addr, FI_DT(SONAME) |
		    FI_DT(STRTAB) | FI_DT(NEEDED), &t);
	strtab = fi_dyn_get(&t, FI_DT_STRTAB);
	if (!strtab || !(t.has & FI_DT(SONAME)) || t.nneeded > FI_DT_NEEDED_MAX)
		return false;
	soname = (const char *)(strtab + fi_dyn_get(&t, FI_DT_SONAME));
	for (size_t i = 0; i < t.nneeded && deps.nnames < FI_EARLY_DEPS; i++)
		deps.names[deps.nnames++] = (const char *)(strtab + t.needed[i]);
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		const char *name = l->l_name ? l->l_name : "";
		const char *base = fi_early_base(name);
		bool preinit = false, dep = false;

		if (l == self)
			continue;
		/* The vdso: a name without a directory, nothing to run. */
		if (name[0] && base == name)
			continue;
		for (size_t i = 0; name[0] && i < deps.nnames; i++)
			dep |= fi_early_eq(base, deps.names[i]);
		if (dep)
			continue;
		if (early) {
			if (l != _r_debug.r_map && fi_early_has_ifunc(l))
				return false;
			continue;
		}
		/* The executable (first, no name) included: its preinit
		 * functions run before every constructor. */
		if (!fi_early_needs(l, soname, self->l_name, &preinit) || preinit ||
		    fi_early_has_ifunc(l))
			return false;
	}
	return true;
}

bool fi_early_first_unrun(void)
{
	return fi_early_unrun(false);
}

/* Safe first (the probe may call libc's memcpy & co.), then useful. */
static bool fi_early_wanted(void)
{
	const struct link_map *lm = fi_early_self();
	bool foreign = false;

	if (!lm || !lm->l_name)
		return false;
	fi_early_bound = fi_early_bound_safely(lm);
	if (!fi_early_bound)
		return false;
	fi_early_own = lm->l_addr;
	dl_iterate_phdr(fi_early_foreign_cb, &foreign);
	return foreign;
}

/* What libc's initialisation sets from the same stack, moments later. */
static void fi_early_environ(void)
{
	const long *sp = __libc_stack_end;

	if (environ || !sp || sp[0] < 0)
		return;
	environ = (char **)(uintptr_t)(sp + 1) + sp[0] + 1;
}

static void fi_early_nop(void)
{
}

/*
 * The pages every start touches, mapped in a few system calls before it
 * touches them, not one page fault each (13 to 23 us a fault on this VM,
 * 0.2 us a page mapped by the call: docs/bench.md, "Fixed costs: the
 * faults a start can take"): libfineibt.so's code and the read-only data
 * right after it (the start-up's constants and switch tables), the pages
 * of the two libc functions the first walk of the modules enters that a
 * program seldom calls itself (dl_iterate_phdr and the loader lock it
 * takes, pthread_mutex_lock), and the two .bss pages every start writes.
 * Only a mapping, never a change of what is mapped or how: a page that
 * is not in the page cache is read as a fault would read it.
 */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

static void fi_early_prefault(void)
{
	const ElfW(Phdr) *ph = (const void *)((uintptr_t)&__ehdr_start +
					      __ehdr_start.e_phoff);
	uintptr_t base = (uintptr_t)&__ehdr_start, lo = 0, hi = 0;

	for (size_t i = 0; i < __ehdr_start.e_phnum; i++) {
		uintptr_t a = base + ph[i].p_vaddr, e = a + ph[i].p_memsz;

		if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_W))
			continue;
		if (ph[i].p_flags & PF_X) {
			lo = a;
			hi = e;
		} else if (hi && (a & ~4095UL) <= ((hi + 4095) & ~4095UL)) {
			hi = e;	/* the read-only data right after the code */
			break;
		}
	}
	fi_prefault_read(lo, hi);
	fi_prefault_read((uintptr_t)&dl_iterate_phdr,
			 (uintptr_t)&dl_iterate_phdr + 1);
	fi_prefault_read((uintptr_t)&pthread_mutex_lock,
			 (uintptr_t)&pthread_mutex_lock + 1);
	/* The two pages of .bss every start writes (src/libfineibt.order:
	 * the small variables, then the scan's scratch). */
	fi_prefault_pages(&fi_early_own, 1);
	fi_rt_scan_prefault();
}

/*
 * Is the loader starting the program, not running a dlopen? The resolver
 * below runs at both: the first time libfineibt.so is relocated, which
 * is a dlopen's when the program was not linked with it (a plain program
 * that opens a stock kCFI library, or one built with -static-fineibt).
 * There the program's code has run, its executable is relocated and its
 * resolvers have run: nothing fi_early_unrun(true) assumes holds, and
 * environ is the program's own. At start-up the loader is still adding
 * the initial modules (r_state RT_ADD; before it relocates what a dlopen
 * maps, glibc says RT_CONSISTENT) and libc's initialisation has not set
 * environ. Both must say so.
 */
static bool fi_early_initial(void)
{
	return _r_debug.r_state == RT_ADD && !environ;
}

static void (*fi_early_resolve(void))(void)
{
	/* Sanitized: no load here before the sanitizer's start either. */
	if (!FI_EARLY_SANITIZED)
		fi_early_prefault();
	if (!FI_EARLY_SANITIZED && fi_early_wanted()) {
		bool initial = fi_early_initial();

		if (initial)
			fi_early_environ();
		/* Not libc's malloc: the TLS block it would set up for the
		 * thread is overwritten after relocation (alloc.c). */
		fi_alloc_private_begin();
		fi_rt_start_early(initial && fi_early_unrun(true));
		fi_alloc_private_end();
	}
	return fi_early_nop;
}

/*
 * Hidden, and referenced from data: an IRELATIVE relocation, so the
 * resolver runs once, when the loader relocates libfineibt.so. Retained:
 * nothing else references the pointer, and the library is linked with
 * --gc-sections.
 */
__attribute__((visibility("hidden"))) void fi_rt_early_start(void)
	__attribute__((ifunc("fi_early_resolve")));
__attribute__((used, retain)) static void (*const fi_rt_early_ref)(void) =
	fi_rt_early_start;
