// SPDX-License-Identifier: MIT
/*
 * Typed veneers (docs/compat.md, "Stock kCFI modules"). A module built by
 * clang with -fsanitize=kcfi alone that takes the address of a libc
 * function (strcmp handed to qsort, strlen in a table) calls it through a
 * kCFI check, and libc's functions carry no hash: the check traps. The
 * module says which type it expects of each such function: clang defines
 * __kcfi_typeid_<name> for it. So each pointer slot of the module that
 * the loader bound to <name> in an uninstrumented object (a GLOB_DAT slot
 * of the GOT, or a data word with an R_X86_64_64 relocation) is pointed
 * at a veneer whose preamble carries exactly that type (run-time hash,
 * the module's mode) and which jumps on to the function. Nothing else is
 * accepted: not another type, not any foreign function, and no signal is
 * taken per call.
 *
 * Veneers are 64-byte slots (insn.h, fi_emit_typed_veneer) in one region
 * reserved once; each page is built on a scratch mapping, made
 * read-execute and moved into place with mremap, never writable and
 * executable at once, never written again. The same function and type
 * always get the same veneer. The region's base and the records (the
 * function, type and name of each slot) are in the runtime's read-only
 * state (fi_rt()->foreign), the records in a region of the runtime's
 * (fi_rt_map_protected: never writable, written with fi_rt_put).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "coarse.h"
#include "upcall.h"
#include "insn.h"
#include "livedyn.h"
#include "rtlive.h"
#include "runtime.h"
#include "stockven.h"

#define FI_PAGE		4096ULL
#define FI_SVEN_REGION	(1ULL << 20)
#define FI_SVEN_MAX	(FI_SVEN_REGION / FI_FVEN_SLOT)
#define FI_SVEN_PER_PG	(FI_PAGE / FI_FVEN_SLOT)

/* Record of slot n; rec[0].fn is the number of slots taken (whole pages). */
struct fi_sven_rec {
	uint64_t fn;
	uint32_t hash;
	char name[52];
};
#define FI_SX()		(&fi_rt()->foreign)
#define fi_sven_recs	((struct fi_sven_rec *)FI_SX()->sven_recs)
#define FI_SVEN_RECS	((FI_SVEN_MAX + 1) * sizeof(struct fi_sven_rec))

static pthread_mutex_t fi_sven_lock = PTHREAD_MUTEX_INITIALIZER;

static bool fi_sven_reserve(void)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	void *p, *recs = NULL;

	if (FI_SX()->sven_base)
		return true;
	p = mmap(NULL, FI_SVEN_REGION, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	rt = fi_rt_write_begin(&saved);
	if (rt)
		recs = fi_rt_map_protected(FI_SVEN_RECS);
	/* The records first: a base says they are there. */
	if (!recs || FI_RT_PUT(rt->foreign.sven_recs, recs) ||
	    FI_RT_PUT(rt->foreign.sven_base, (uint64_t)(uintptr_t)p)) {
		if (rt)
			fi_rt_write_end(&saved);
		munmap(p, FI_SVEN_REGION);
		return false;
	}
	fi_rt_write_end(&saved);
	return true;
}

/* The published veneer of @fn with type @hash, or 0. */
static uint64_t fi_sven_find(uint64_t fn, uint32_t hash)
{
	const struct fi_sven_rec *r = fi_sven_recs;
	uint64_t n = __atomic_load_n(&r[0].fn, __ATOMIC_ACQUIRE);

	for (uint64_t i = 0; i < n && i < FI_SVEN_MAX; i++) {
		if (r[i + 1].fn == fn && r[i + 1].hash == hash)
			return FI_SX()->sven_base + i * FI_FVEN_SLOT + FI_FVEN_ENTRY;
	}
	return 0;
}

/* One veneer to make: the slot to point at it, its function and type. */
struct fi_sven_want {
	uint64_t fn;
	uint32_t hash;
	const char *name;
	uint64_t *slot;
};

static bool fi_sven_due(const struct fi_module *m, const struct fi_sven_want *x);

/*
 * Publish @n (at most a page of) veneers on the next free page: built on
 * a scratch mapping, sealed, moved in place; then recorded. Their entries
 * in @ven[]; false when the region is full or a call failed.
 */
static bool fi_sven_page(const struct fi_module *m,
			 const struct fi_sven_want *w, size_t n, bool fineibt,
			 int set, uint64_t *ven)
{
	const struct fi_sven_rec *r = fi_sven_recs;
	struct fi_sven_rec recs[FI_SVEN_PER_PG];
	uint64_t used = r[0].fn, at, count = used + FI_SVEN_PER_PG;
	uint8_t *scratch, want[FI_FVEN_SLOT];
	sigset_t saved;
	bool ok;

	if (used + FI_SVEN_PER_PG > FI_SVEN_MAX || n > FI_SVEN_PER_PG)
		return false;
	at = FI_SX()->sven_base + used * FI_FVEN_SLOT;
	scratch = mmap(NULL, FI_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (scratch == MAP_FAILED)
		return false;
	memset(scratch, 0xcc, FI_PAGE);
	for (size_t i = 0; i < n; i++) {
		if (fi_emit_typed_veneer(scratch + i * FI_FVEN_SLOT, w[i].fn,
					 w[i].hash, 0, fineibt, set)) {
			munmap(scratch, FI_PAGE);
			return false;
		}
		ven[i] = at + i * FI_FVEN_SLOT + FI_FVEN_ENTRY;
	}
	ok = !mprotect(scratch, FI_PAGE, PROT_READ | PROT_EXEC);
	/*
	 * The scratch was writable while other threads ran: what becomes
	 * code is checked once nothing can write it (as foreign.c's pages,
	 * docs/protection.md "Escapes"): each veneer again, int3 after.
	 * And what it was made from (@w, writable too) is read once and
	 * checked again: the loader's binding of the name, the module's
	 * type of it; the records are made from that same read.
	 */
	memset(recs, 0, sizeof(recs));
	for (size_t i = 0; ok && i < n; i++) {
		struct fi_sven_want x = w[i];

		memset(want, 0xcc, sizeof(want));
		ok = fi_sven_due(m, &x) &&
		     !fi_emit_typed_veneer(want, x.fn, x.hash, 0, fineibt, set) &&
		     !memcmp(scratch + i * FI_FVEN_SLOT, want, sizeof(want));
		recs[i].fn = x.fn;
		recs[i].hash = x.hash;
		snprintf(recs[i].name, sizeof(recs[i].name), "%s", x.name);
	}
	for (size_t i = n * FI_FVEN_SLOT; ok && i < FI_PAGE; i++)
		ok = scratch[i] == 0xcc;
	if (!ok || mremap(scratch, FI_PAGE, FI_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
			  (void *)(uintptr_t)at) == MAP_FAILED) {
		munmap(scratch, FI_PAGE);
		return false;
	}
	/* The records of this page, then the count that publishes them. */
	if (!fi_rt_write_begin(&saved))
		return false;
	ok = !fi_rt_put(&r[used + 1], recs, n * sizeof(recs[0])) &&
	     !fi_rt_put(&r[0].fn, &count, sizeof(count));
	fi_rt_write_end(&saved);
	return ok;
}

bool fi_stock_veneer_at(uint64_t addr, uint64_t *fn, uint64_t *entry,
			const char **name)
{
	uint64_t base = __atomic_load_n(&FI_SX()->sven_base, __ATOMIC_ACQUIRE);
	const struct fi_sven_rec *r;
	uint64_t n, i;

	if (!base || addr < base || addr - base >= FI_SVEN_REGION)
		return false;
	r = fi_sven_recs;
	n = __atomic_load_n(&r[0].fn, __ATOMIC_ACQUIRE);
	i = (addr - base) / FI_FVEN_SLOT;
	if (i >= n || !r[i + 1].fn)
		return false;
	*fn = r[i + 1].fn;
	*entry = base + i * FI_FVEN_SLOT + FI_FVEN_ENTRY;
	*name = r[i + 1].name;
	return true;
}

/* ------------------------------------------------------- the module walk */

/* The module's __kcfi_typeid_<@name>, if it defines one. */
static bool fi_sven_typeid(const struct fi_module *m, const char *name,
			   uint32_t *hash)
{
	for (size_t i = 0; i < m->img.ntypeids; i++) {
		if (!strcmp(m->img.typeids[i].name, name)) {
			*hash = m->img.typeids[i].hash;
			return true;
		}
	}
	return false;
}

/* The run-time hash of compile-time @hash in module @m. */
static uint32_t fi_sven_hash(const struct fi_module *m, uint32_t hash)
{
	return m->cfg.flags & FINEIBT_F_RAND ?
	       fineibt_rehash(hash, &m->rehash_key) : hash;
}

/*
 * Is @fn what the loader binds @name to? The slot is a data word, and a
 * GLOB_DAT slot outside RELRO or an R_X86_64_64 word in .data is
 * writable: a thread with a write primitive may have put any code
 * address there, before this walk or while it runs. A veneer would make
 * that address a valid target of the module's type, so the value read is
 * taken only when it is a real export: the dynamic symbol dladdr names
 * exactly at @fn, which the kernel and the object's own read-only tables
 * confirm (fi_export_real: dladdr reads the writable link_map, whose
 * symbol table a forger aims at one naming anything "strcmp"), and that
 * is @name itself or libc's lookup of @name in the global scope (an
 * alias); or, where no export is at @fn, the implementation @name's IFUNC
 * in that object resolves to (fi_export_ifunc), as the loader bound it.
 * Anything else gets no veneer: the module's check traps on it, as
 * stock kCFI does. Without /proc, libc's lookup alone, as before.
 */
extern void *fi_sven_libc_dlsym(void *handle, const char *name);
__asm__(".symver fi_sven_libc_dlsym, dlsym@GLIBC_2.2.5");

static bool fi_sven_bound(uint64_t fn, const char *name)
{
	/* libc's dlsym itself: the runtime's own exported dlsym (which its
	 * calls bind to) would answer a function of libc with a dlsym veneer,
	 * never @fn, and spend a veneer slot on it. */
	void *p = fi_sven_libc_dlsym(RTLD_DEFAULT, name);
	bool looked = p && (uint64_t)(uintptr_t)p == fn;
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	int ok;

	if (!dladdr1((void *)(uintptr_t)fn, &info, (void **)&sym, RTLD_DL_SYMENT))
		return false;
	if (sym && info.dli_sname && (uint64_t)(uintptr_t)info.dli_saddr == fn)
		return (looked || !strcmp(info.dli_sname, name)) &&
		       fi_export_real(fn, info.dli_fbase, sym, info.dli_sname, false);
	ok = fi_export_ifunc(fn, info.dli_fbase, name);
	return ok == -ENODEV ? looked : ok > 0;
}

/*
 * @x is a veneer the module may have: @x->name's binding, with the type
 * the module gives that name (its read-only record).
 */
static bool fi_sven_due(const struct fi_module *m, const struct fi_sven_want *x)
{
	uint32_t hash;

	return x->name && fi_sven_typeid(m, x->name, &hash) &&
	       fi_sven_hash(m, hash) == x->hash && fi_sven_bound(x->fn, x->name);
}

struct fi_sven_walk {
	bool waits;
	struct fi_sven_want want[FI_SVEN_PER_PG];
};

/* Make and store the veneers of @w->want[0..@n) for @m. */
static void fi_sven_flush(struct fi_sven_walk *w, size_t n,
			  const struct fi_module *m, const struct fi_livedyn *d)
{
	struct fi_sven_want fresh[FI_SVEN_PER_PG];
	uint64_t ven[FI_SVEN_PER_PG];
	size_t k = 0;

	/* Already made (this module's other slots, another module's)? */
	for (size_t i = 0; i < n; i++) {
		uint64_t v = fi_sven_find(w->want[i].fn, w->want[i].hash);
		bool dup = false;

		for (size_t j = 0; j < k && !dup; j++)
			dup = fresh[j].fn == w->want[i].fn &&
			      fresh[j].hash == w->want[i].hash;
		if (v)
			fi_live_store_slot(d->relro_lo, d->relro_hi,
					   (void **)w->want[i].slot,
					   (void *)(uintptr_t)v);
		else if (!dup)
			fresh[k++] = w->want[i];
	}
	if (!k || !fi_sven_page(m, fresh, k, m->cfg.mode == FINEIBT_MODE_FINEIBT,
				m->cfg.flags & FINEIBT_F_SEQ_V618 ? FI_SET_V618 :
								    FI_SET_V4,
				ven))
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = fi_sven_find(w->want[i].fn, w->want[i].hash);

		if (v && *w->want[i].slot != v)
			fi_live_store_slot(d->relro_lo, d->relro_hi,
					   (void **)w->want[i].slot,
					   (void *)(uintptr_t)v);
	}
}

static int fi_sven_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_sven_walk *w = arg;
	const struct fi_module *m;
	struct dl_find_object fo;
	struct fi_livedyn d;
	uint64_t text = 0;
	size_t n = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			text = info->dlpi_addr + p->p_vaddr;
			break;
		}
	}
	m = text ? fi_rt_module_at(text) : NULL;
	if (!m || !m->stock || !m->img.ntypeids)
		return 0;
	/* Not relocated yet (see dlsym_so.c's bind pass): next time. */
	if (_dl_find_object((void *)(uintptr_t)text, &fo)) {
		w->waits = true;
		return 0;
	}
	if (!fi_livedyn_read(info, &d) || !d.rel[0])
		return 0;
	for (size_t i = d.nrelative; i < d.nrel[0]; i++) {
		const ElfW(Rela) *r = &d.rel[0][i];
		unsigned int type = ELF64_R_TYPE(r->r_info);
		const ElfW(Sym) *s = &d.sym[ELF64_R_SYM(r->r_info)];
		uint64_t *slot = (uint64_t *)(info->dlpi_addr + r->r_offset);
		uint64_t cur, base = FI_SX()->sven_base;
		uint32_t hash;

		if ((type != R_X86_64_GLOB_DAT &&
		     !(type == R_X86_64_64 && !r->r_addend)) ||
		    !ELF64_R_SYM(r->r_info) || s->st_shndx != SHN_UNDEF ||
		    ELF64_ST_TYPE(s->st_info) == STT_OBJECT ||
		    !fi_sven_typeid(m, d.str + s->st_name, &hash))
			continue;
		cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (!cur || (base && cur - base < FI_SVEN_REGION) ||
		    !fi_foreign_is_code(cur) ||
		    !fi_sven_bound(cur, d.str + s->st_name))
			continue;
		if (!fi_sven_reserve())
			return 1;
		w->want[n++] = (struct fi_sven_want){
			.fn = cur, .hash = fi_sven_hash(m, hash),
			.name = d.str + s->st_name, .slot = slot,
		};
		if (n == FI_SVEN_PER_PG) {
			fi_sven_flush(w, n, m, &d);
			n = 0;
		}
	}
	if (n)
		fi_sven_flush(w, n, m, &d);
	return 0;
}

bool fi_stock_veneers(void)
{
	static struct fi_sven_walk w;

	pthread_mutex_lock(&fi_sven_lock);
	w.waits = false;
	dl_iterate_phdr(fi_sven_cb, &w);
	pthread_mutex_unlock(&fi_sven_lock);
	return w.waits;
}
