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
 * pointer to dladdr(), which knows nothing of veneers. Those calls are
 * tail calls to libc's, so that glibc still sees the real caller's
 * return address.
 *
 * RTLD_NEXT depends on who calls, and glibc would see us. For a kCFI
 * caller (an LD_PRELOAD interposer such as libfaketime, which finds the
 * real clock_gettime this way and calls it through a pointer) we repeat
 * the search: the first object after the caller's in the link-map chain
 * whose own scope resolves the name to itself. When that is
 * uninstrumented code it gets a veneer. When nothing is found (the
 * caller was loaded by dlopen: glibc searches its root's scope) and the
 * caller's module has an RTLD_NEXT entry (crt/next.S, found through its
 * note; it calls libc's dlsym through its own GOT), glibc answers through it, as seen
 * from that module, and the answer gets a veneer if it needs one.
 * Otherwise (a kCFI definition, which needs none, or an older module)
 * glibc answers by tail call as for everyone else. The chain also holds
 * objects dlopen'ed with RTLD_LOCAL,
 * which glibc's RTLD_NEXT skips: the two can differ only when such an
 * object, loaded after the caller, defines the name too (docs/compat.md).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "foreign.h"
#include "imgindex.h"
#include "livedyn.h"
#include "rtlive.h"
#include "runtime.h"
#include "interpose.h"

#define FI_EXPORT	__attribute__((visibility("default")))

extern void *fi_libc_dlsym(void *, const char *);
extern void *fi_libc_dlvsym(void *, const char *, const char *);
__asm__(".symver fi_libc_dlsym, dlsym@GLIBC_2.2.5");
__asm__(".symver fi_libc_dlvsym, dlvsym@GLIBC_2.2.5");
/* Not our dlopen interposer (dlhook.c): no rewriting pass per lookup. */
extern void *fi_libc_dlopen(const char *, int);
__asm__(".symver fi_libc_dlopen, dlopen@GLIBC_2.2.5");

/*
 * libc's answer to dlsym(RTLD_NEXT, @name) for libfineibt.so (the call
 * below comes from it), without the interposer above it: the modules'
 * hash tables when they settle it (livedyn.c), else libc's dlsym.
 */
void *fi_next_libc(const char *name)
{
	void *p = fi_livedyn_next(name);

	return p ? p : fi_libc_dlsym(RTLD_NEXT, name);
}

/* The object that holds @p (foreign.c: no symbol search), or NULL. */
static struct link_map *fi_next_owner(const void *p)
{
	const void *base;

	return fi_foreign_object_at(p, &base);
}

/* @p, found through @l's handle, is @l's own definition: in @l, or where
 * an IFUNC of @l sent it (libc's gettimeofday resolves into the vDSO). */
static bool fi_next_is_own(const void *p, const struct link_map *l)
{
	const struct link_map *o = fi_next_owner(p);

	return o == l || (o && o->l_name && !strchr(o->l_name, '/'));
}

/*
 * RTLD_NEXT as seen from @ret. A lookup through an object's dlopen handle
 * searches that object's scope first, so a result the object itself
 * defines is that object's definition. The handle comes from
 * dlopen(RTLD_NOLOAD), which also builds the scope of an object loaded
 * at start-up (glibc leaves it empty until then: a lookup through the
 * bare link_map crashes).
 */
static void *fi_next_sym(const void *ret, const char *name,
			 const char *version)
{
	struct link_map *self = fi_next_owner(ret);

	for (struct link_map *l = self ? self->l_next : NULL; l; l = l->l_next) {
		void *h, *p;

		/* The vDSO (linux-vdso.so.1) has no file; every object
		 * loaded from one has a '/' in its name. */
		if (!l->l_name || !strchr(l->l_name, '/'))
			continue;
		h = fi_libc_dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			continue;
		p = version ? fi_libc_dlvsym(h, name, version) :
			      fi_libc_dlsym(h, name);
		dlclose(h);
		if (p && fi_next_is_own(p, l))
			return p;
	}
	return NULL;
}

/* The module @l and its RTLD_NEXT note, for fi_next_crt. */
struct fi_next_find {
	const struct link_map *l;
	struct fi_next_note n;
	bool found;
};

static int fi_next_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_next_find *f = arg;

	(void)size;
	if (info->dlpi_addr != f->l->l_addr || info->dlpi_name != f->l->l_name)
		return 0;
	f->found = fi_next_find(info->dlpi_phdr, info->dlpi_phnum,
				info->dlpi_addr, &f->n);
	return 1;
}

/*
 * RTLD_NEXT answered by glibc for the caller's module, through the
 * module's RTLD_NEXT entry (crt/next.S), if its note names one (a module
 * built by an older fineibt-cc: no) and its GOT slot holds libc's dlsym
 * (dlvsym), as ours does; NULL otherwise, with *@asked false. The entry
 * calls only what that read-only slot holds: the runtime passes it no
 * code address. It has no ENDBR (nothing reaches it by an indirect
 * branch under IBT); this call is made without a tracked branch, as
 * the runtime's own calls are (no user IBT on Linux).
 */
static void *fi_next_crt(const void *ret, const char *name,
			 const char *version, bool *asked)
{
	struct fi_next_find f = { .l = fi_next_owner(ret) };
	void *(*entry)(const char *, const char *);
	void *want = version ? (void *)fi_libc_dlvsym : (void *)fi_libc_dlsym;

	*asked = false;
	if (!f.l || !f.l->l_name || !strchr(f.l->l_name, '/'))
		return NULL;
	dl_iterate_phdr(fi_next_find_cb, &f);
	if (!f.found || *f.n.slot[version ? 1 : 0] != want)
		return NULL;
	*asked = true;
	entry = (void *(*)(const char *, const char *))f.n.entry;
	return entry(name, version);
}

/* A veneer for RTLD_NEXT's uninstrumented answer, else NULL. */
static void *fi_next_veneer(const void *ret, const char *name,
			    const char *version)
{
	void *p, *v;
	bool asked;

	if (!name || !fi_foreign_for_caller(ret))
		return NULL;
	p = fi_next_sym(ret, name, version);
	if (!p) {
		p = fi_next_crt(ret, name, version, &asked);
		if (asked)
			return p ? fi_foreign_wrap(p, name) : NULL;
	}
	if (!p)
		return NULL;
	v = fi_foreign_wrap(p, name);
	return v != p ? v : NULL;
}

/* Names of the functions signals.c interposes for SIGILL start "s"/"_"/"b". */
static bool fi_maybe_sig(const char *name)
{
	return name && (name[0] == 's' || name[0] == '_' || name[0] == 'b') &&
	       strstr(name, "sig");
}

/* A kCFI caller gets a veneer of whichever it is. */
static void *fi_sig_wrap(void *p, const char *name, const void *ret)
{
	p = fi_sig_entry(name, p);
	return fi_foreign_for_caller(ret) ? fi_foreign_wrap(p, name) : p;
}

FI_EXPORT void *dlsym(void *handle, const char *name)
{
	void *v;

	/* libc's own sigaction & co. found past libfineibt: ours instead. */
	if (fi_maybe_sig(name))
		return fi_sig_wrap(fi_libc_dlsym(handle, name), name,
				   __builtin_return_address(0));
	if (handle == RTLD_NEXT) {
		v = fi_next_veneer(__builtin_return_address(0), name, NULL);
		if (v)
			return v;
		__attribute__((musttail)) return fi_libc_dlsym(handle, name);
	}
	if (!fi_foreign_for_caller(__builtin_return_address(0)))
		__attribute__((musttail)) return fi_libc_dlsym(handle, name);
	return fi_foreign_wrap(fi_libc_dlsym(handle, name), name);
}

FI_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	void *v;

	if (fi_maybe_sig(name))
		return fi_sig_wrap(fi_libc_dlvsym(handle, name, version), name,
				   __builtin_return_address(0));
	if (handle == RTLD_NEXT) {
		v = fi_next_veneer(__builtin_return_address(0), name, version);
		if (v)
			return v;
		__attribute__((musttail)) return fi_libc_dlvsym(handle, name, version);
	}
	if (!fi_foreign_for_caller(__builtin_return_address(0)))
		__attribute__((musttail)) return fi_libc_dlvsym(handle, name, version);
	return fi_foreign_wrap(fi_libc_dlvsym(handle, name, version), name);
}

/* ------------------------------------------------------------ binding */

/*
 * Our dlsym/dlvsym/dlopen only see the calls bound to them: when
 * libfineibt.so comes after libc in the lookup order (a kCFI library
 * LD_PRELOADed into an uninstrumented program pulls it in behind libc),
 * a kCFI module's references bind to libc's, and what it gets from
 * dlsym(RTLD_NEXT) has no veneer. So after each rewriting pass
 * (start.c) the GOT slots of kCFI modules that name these functions
 * are pointed at ours. Uninstrumented modules keep libc's (see above).
 */
static void *fi_dlsym_local(void *, const char *)
	__attribute__((alias("dlsym")));
static void *fi_dlvsym_local(void *, const char *, const char *)
	__attribute__((alias("dlvsym")));

static void *fi_bind_target(const char *name)
{
	/* Asked for every symbol relocation of every kCFI module at
	 * start-up: most names are not "dl...", told without a call. */
	if (name[0] != 'd' || name[1] != 'l')
		return NULL;
	if (!strcmp(name, "dlsym"))
		return (void *)fi_dlsym_local;
	if (!strcmp(name, "dlvsym"))
		return (void *)fi_dlvsym_local;
	if (!strcmp(name, "dlopen"))
		return (void *)fi_dlopen_local;
	return NULL;
}

/*
 * What a slot for @name in RELRO holds before it is rebound: libc's
 * function, as the loader bound it for this library too (its own GOT:
 * read-only, and never a binding store's target, rtlive.c). The
 * relocations naming the slot come from the loader's writable link map:
 * without this, a forged one put our dlopen in any read-only GOT slot
 * (the executable's open(path, O_RDWR) then loaded a library:
 * tests/e2e/protect_slot.sh). A slot outside the RELRO range is stored
 * as any write (a read-only page faults: nothing lands there).
 */
static void *fi_bind_libc(const char *name)
{
	if (!strcmp(name, "dlsym"))
		return (void *)fi_libc_dlsym;
	if (!strcmp(name, "dlvsym"))
		return (void *)fi_libc_dlvsym;
	if (!strcmp(name, "dlopen"))
		return (void *)fi_libc_dlopen;
	return NULL;
}

/* What a kCFI module's slot for @name must hold (src/interpose/plt.c, through
 * the variant's table). */
void *fi_bind_want(const char *name)
{
	return fi_bind_target(name);
}

/*
 * Is @slot one of the module's RTLD_NEXT entry's own (crt/next.S)? They
 * name dlsym/dlvsym too, at libc's compat version, and must keep libc's:
 * bound to ours, the entry would call the interposer that calls it.
 * The note is read once per module, at its first slot to rebind.
 */
static bool fi_next_own_slot(const struct dl_phdr_info *info, void **slot,
			     int *have, struct fi_next_note *n)
{
	if (!*have)
		*have = fi_next_find(info->dlpi_phdr, info->dlpi_phnum,
				     info->dlpi_addr, n) ? 1 : -1;
	return *have > 0 && (slot == (void **)n->slot[0] ||
			     slot == (void **)n->slot[1]);
}

/*
 * The first relocation of [@r, @end) that may bind a symbol through a
 * GOT slot (GLOB_DAT or JUMP_SLOT), or @end. Its own loop, not inlined: a
 * load and a compare an entry, where a library whose tables take the
 * addresses of its exported functions has thousands of R_X86_64_64
 * relocations to pass.
 */
static __attribute__((noinline)) const ElfW(Rela) *
fi_bind_next(const ElfW(Rela) *r, const ElfW(Rela) *end)
{
	/* 6 or 7 in one compare (the caller passes symbol 0) */
	while (r < end && ((uint32_t)r->r_info | 1) != R_X86_64_JUMP_SLOT)
		r++;
	return r;
}

static int fi_bind_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dl_find_object fo;
	struct fi_next_note n;
	uintptr_t text = 0;
	struct fi_livedyn d;
	bool *waits = arg;
	int have = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			text = info->dlpi_addr + p->p_vaddr;
			break;
		}
	}
	/* Registered kCFI modules (the runtime may not be active yet: this
	 * runs inside the start-up pass). */
	if (!text || !fi_rt_module_at(text))
		return 0;
	/*
	 * The walk sees a module as soon as another thread's dlopen has
	 * mapped it, and a scan may have taken it then: the loader has yet
	 * to fill its GOT and make its RELRO read-only, and a store here
	 * closed the RELRO page under the loader's own writes (SIGSEGV in
	 * _dl_relocate_object; tests/e2e/rt_dlopen_threads.sh). The loader
	 * enters an object in _dl_find_object's table once it is relocated:
	 * until then it waits for the next pass.
	 */
	if (_dl_find_object((void *)text, &fo)) {
		*waits = true;
		return 0;
	}
	if (!fi_livedyn_read(info, &d))
		return 0;
	/*
	 * The first DT_RELACOUNT entries of DT_RELA are relative relocations
	 * (ld.so applies them as such without reading their type): no symbol
	 * to bind there. A program with many function pointers has tens of
	 * thousands of them.
	 */
	for (int t = 0; t < 2; t++) {
		const ElfW(Rela) *r, *end;

		if (!d.rel[t] || (!t && d.nrelative >= d.nrel[0]))
			continue;
		end = d.rel[t] + d.nrel[t];
		for (r = d.rel[t] + (t ? 0 : d.nrelative);
		     (r = fi_bind_next(r, end)) < end; r++) {
			const char *name;
			void **slot, *to;

			if (!ELF64_R_SYM(r->r_info))
				continue;
			name = d.str + d.sym[ELF64_R_SYM(r->r_info)].st_name;
			to = fi_bind_target(name);
			slot = (void **)(info->dlpi_addr + r->r_offset);
			/* A slot still lazy (its PLT entry), or bound to
			 * another library, is writable memory (.got.plt)
			 * or not ours to take: only libc's binding is
			 * replaced in a read-only page. */
			if (to && *slot != to &&
			    (*slot == fi_bind_libc(name) ||
			     (uintptr_t)slot < d.relro_lo ||
			     (uintptr_t)slot >= d.relro_hi) &&
			    !fi_next_own_slot(info, slot, &have, &n))
				fi_live_store_slot(d.relro_lo, d.relro_hi, slot, to);
		}
	}
	return 0;
}

/* start.c, after a rewriting pass that took new modules (through the
 * shared variant's table: not in libfineibt.a, whose executable's dlsym
 * is its own). True when a registered module is still being loaded: bind
 * again next pass. */
bool fi_bind_interposers(void)
{
	bool waits = false;

	dl_iterate_phdr(fi_bind_cb, &waits);
	return waits;
}
