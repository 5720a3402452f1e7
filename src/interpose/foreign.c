// SPDX-License-Identifier: MIT
/*
 * Function pointers into uninstrumented code that the program obtains
 * from dlsym()/dlvsym() (docs/compat.md, "Foreign function pointers").
 *
 * Such a function has no type hash in front of it, and no single hash
 * could satisfy every caller. So:
 *
 *  - dlsym/dlvsym (interposed by dlsym_so.c) return, for a function in an executable segment of a
 *    module that is not kCFI, a veneer (insn.h, FI_FVEN_SLOT): ENDBR + jmp
 *    at V-16 for FineIBT callers and at V for every other, in a region of
 *    read-execute pages reserved once; each page is built on a scratch
 *    copy and moved in place with mremap, so published veneers are never
 *    writable. The same function always gets the same veneer.
 *  - In the callee-checking modes (fineibt, bhi) that is all: the caller
 *    lands on the veneer's ENDBR, never 16 bytes before the function.
 *  - A checking caller (kcfi, paranoid) traps the first time it meets a
 *    veneer. The SIGILL handler sees that the target is a veneer entry,
 *    lets the call go on, and opens the site: a per-site stub near the
 *    module repeats the site's check and, when it fails, accepts exactly
 *    the veneer entries (a range and alignment test) before going back to
 *    the site's own check, which traps as before. The site's first five
 *    bytes become a jmp to the stub (insn.h, fi_emit_foreign_stub). From
 *    then on that site costs two jumps and a few instructions per call,
 *    and no more signals.
 *
 * Everything the handler does here is mmap/mprotect/mremap and copies:
 * no allocation, no lock (one busy flag taken with an atomic exchange;
 * a thread that finds it taken lets its call go on and tries next time).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coarse.h"
#include "ctor.h"
#include "foreign.h"
#include "rawsys.h"
#include "insn.h"
#include "rtlive.h"
#include "runtime.h"
#include "trapinfo.h"

#define FI_PAGE		4096ULL
#define FI_FVEN_MAX	(FI_FVEN_REGION / FI_FVEN_SLOT)

/*
 * The veneer region's base, the names mapping and the stub pages are in
 * the read-only state (fi_rt()->foreign). A slot is published when its
 * name record holds its function (fi_fx_slot_fn): slots are taken in
 * order, so the first empty record is the count. Keeping the count in
 * the state cost a write window per veneer (~5 system calls: libfaketime
 * asks for ~40 veneers at every start); the records are in a
 * region of the runtime's (fi_rt_map_protected), never writable, written
 * with fi_rt_put under fi_fven_lock.
 */
#define FI_FX()		(&fi_rt()->foreign)
#define fi_fven_names	((struct fi_fven_name *)FI_FX()->fven_names)
/* The name dlsym was asked for, per slot, for reports; @fn says the
 * slot is published; never changed after. */
struct fi_fven_name {
	uint64_t fn;
	char name[56];
};
static pthread_mutex_t fi_fven_lock = PTHREAD_MUTEX_INITIALIZER;

/* Stub pages (FI_FX()->stub_pages), each near some module's text;
 * filled from the bottom. */
static int fi_fstub_busy;

static uint64_t fi_page_down(uint64_t a)
{
	return a & ~(FI_PAGE - 1);
}

/* Is every byte of @p[0, @n) an int3? (Equal neighbours, first 0xcc.) */
static bool fi_fx_all_int3(const uint8_t *p, uint64_t n)
{
	return !n || (p[0] == 0xcc && !memcmp(p, p + 1, n - 1));
}

/*
 * Does sealed @copy (@n bytes, a copy of the pages at @lo) hold exactly
 * what fi_fx_publish meant to write: @bytes at @at, the original pages
 * (or int3s when @fresh) everywhere else? Compared with memcmp: a byte
 * loop here cost ~65,000 instructions per veneer (docs/bench.md).
 */
static bool fi_fx_copy_ok(const uint8_t *copy, uint64_t lo, uint64_t n,
			  uint64_t at, const void *bytes, size_t len, bool fresh)
{
	const uint8_t *orig = (const uint8_t *)(uintptr_t)lo;
	uint64_t end = at + len;

	if (memcmp(copy + at, bytes, len))
		return false;
	if (fresh)
		return fi_fx_all_int3(copy, at) &&
		       fi_fx_all_int3(copy + end, n - end);
	return !memcmp(copy, orig, at) && !memcmp(copy + end, orig + end, n - end);
}

/*
 * Write @len bytes at @addr into read-execute memory: a scratch copy of
 * the pages is written, sealed read-execute and moved over the originals
 * in one mremap. @fresh: the pages hold nothing yet (PROT_NONE); start
 * from int3s instead of copying.
 */
static int fi_fx_publish(uint64_t addr, const void *bytes, size_t len,
			 bool fresh)
{
	uint64_t lo = fi_page_down(addr);
	uint64_t n = fi_page_down(addr + len + FI_PAGE - 1) - lo;
	/* Raw system calls: this runs in the SIGILL handler, where a
	 * program's interposer of mmap must not (rawsys.h). */
	long r = fi_sys6(SYS_mmap, 0, (long)n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *copy = (uint8_t *)r;

	if ((unsigned long)r > -4096UL)
		return (int)r;
	if (fresh)
		memset(copy, 0xcc, n);
	else
		memcpy(copy, (const void *)(uintptr_t)lo, n);
	memcpy(copy + (addr - lo), bytes, len);
	r = fi_sys3(SYS_mprotect, (long)copy, (long)n, PROT_READ | PROT_EXEC);
	if (r < 0) {
		fi_raw_munmap(copy, n);
		return (int)r;
	}
	/*
	 * The copy was writable while other threads ran: what becomes code
	 * is checked once nothing can write it any more (docs/protection.md).
	 */
	if (!fi_fx_copy_ok(copy, lo, n, addr - lo, bytes, len, fresh)) {
		fi_raw_munmap(copy, n);
		return -EBADMSG;
	}
	r = fi_sys6(SYS_mremap, (long)copy, (long)n, (long)n,
		    MREMAP_MAYMOVE | MREMAP_FIXED, (long)lo, 0);
	if ((unsigned long)r > -4096UL) {
		fi_raw_munmap(copy, n);
		return (int)r;
	}
	return 0;
}

/* ------------------------------------------------------------- veneers */

/* Slot @i's function if it is published, else 0. Signal-safe: the
 * names mapping is reserved whole (unwritten pages read as zeros). */
static uint64_t fi_fx_slot_fn(uint64_t i)
{
	const struct fi_fven_name *names;

	if (!__atomic_load_n(&FI_FX()->fven_base, __ATOMIC_ACQUIRE) ||
	    i >= FI_FVEN_MAX)
		return 0;
	names = fi_fven_names;
	return __atomic_load_n(&names[i].fn, __ATOMIC_ACQUIRE);
}

/* Is @addr the entry of a published dlsym veneer? Signal-safe. */
static bool fi_foreign_is_veneer(uint64_t addr)
{
	uint64_t base = __atomic_load_n(&FI_FX()->fven_base, __ATOMIC_ACQUIRE);
	uint64_t off = addr - base - FI_FVEN_ENTRY;

	return base && addr >= base + FI_FVEN_ENTRY &&
	       off % FI_FVEN_SLOT == 0 && fi_fx_slot_fn(off / FI_FVEN_SLOT);
}

uint64_t fi_foreign_slot_target(uint64_t addr, uint64_t *entry)
{
	uint64_t base = __atomic_load_n(&FI_FX()->fven_base, __ATOMIC_ACQUIRE);
	uint64_t i = (addr - base) / FI_FVEN_SLOT;
	uint64_t fn;

	*entry = 0;
	if (!base || addr < base || !(fn = fi_fx_slot_fn(i)))
		return 0;
	*entry = base + i * FI_FVEN_SLOT + FI_FVEN_ENTRY;
	return fn;
}

/*
 * glibc's _dl_find_object (2.35) finds the object in a sorted table,
 * lock-free; dladdr would also search the object's symbols for the one
 * nearest @p (~60,000 instructions in libc, per call) for a name we do
 * not use: that was most of a preloaded interposer's start-up (docs/bench.md).
 * Same definition of "holds" (its reference implementation is dladdr's
 * search), same base (l_map_start). dladdr1 only when it knows no object
 * there: called from an audit module before glibc built its table, or
 * @p outside every object (dladdr then fails too, without a search).
 */
struct link_map *fi_foreign_object_at(const void *p, const void **base)
{
	struct dl_find_object o;
	struct link_map *lm = NULL;
	Dl_info info;

	if (_dl_find_object((void *)p, &o) == 0 && o.dlfo_link_map) {
		*base = o.dlfo_map_start;
		return o.dlfo_link_map;
	}
	if (!dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	*base = info.dli_fbase;
	return lm;
}

/* Is @addr in an executable segment of a module that is not kCFI? */
bool fi_foreign_is_code(uint64_t addr)
{
	const ElfW(Ehdr) *eh;
	const ElfW(Phdr) *ph;
	struct link_map *lm;
	const void *fbase;

	if (!fi_rt()->active || fi_rt_module_at(addr))
		return false;
	lm = fi_foreign_object_at((void *)(uintptr_t)addr, &fbase);
	if (!lm || !fbase)
		return false;
	eh = fbase;
	ph = (const ElfW(Phdr) *)((const char *)fbase + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		uint64_t lo = lm->l_addr + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    addr >= lo && addr - lo < ph[i].p_memsz)
			return true;
	}
	return false;
}

/* Reserve the veneer region and the names (read-only) once. */
static bool fi_fx_reserve(void)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	void *p, *names = NULL;

	if (FI_FX()->fven_base)
		return true;
	p = mmap(NULL, FI_FVEN_REGION, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	rt = fi_rt_write_begin(&saved);
	if (rt)
		names = fi_rt_map_protected(FI_FVEN_MAX * sizeof(struct fi_fven_name));
	/* The names first: a base says they are there. */
	if (!names || FI_RT_PUT(rt->foreign.fven_names, names) ||
	    FI_RT_PUT(rt->foreign.fven_base, (uint64_t)(uintptr_t)p)) {
		if (rt)
			fi_rt_write_end(&saved);
		munmap(p, FI_FVEN_REGION);
		return false;
	}
	/* Its entries join the coarse check's known ones (coarse.h). */
	fi_rt_coarse_publish(rt);
	fi_rt_write_end(&saved);
	return true;
}

/*
 * Record slot @n: its function, which publishes it, and its name, in one
 * put. A report racing the put may find the function before the name (a
 * name is only ever printed): the handler's decision reads the function.
 */
static int fi_fx_record(uint64_t n, uint64_t fn, const char *name)
{
	struct fi_fven_name e = { .fn = fn };
	sigset_t saved;
	int err;

	snprintf(e.name, sizeof(e.name), "%s", name);
	if (!fi_rt_write_begin(&saved))
		return -errno;
	err = fi_rt_put(&fi_fven_names[n], &e, sizeof(e));
	fi_rt_write_end(&saved);
	return err;
}

/*
 * fork: a child inherits fi_fven_lock as it was. Taken by another thread
 * at that instant, it would stay taken forever in the child, whose first
 * new veneer (any dlsym of a foreign function) would then hang. The
 * forking thread takes it first and both sides release it. Registered
 * after rtwrite.c's handlers (src/rt/ctor.h: FI_CTOR_RTWRITE before
 * FI_CTOR_FOREIGN), so this prepare handler runs before theirs: the
 * order fi_fx_veneer takes the locks in (a first veneer reserves its
 * region in a state window, under fi_fven_lock).
 */
static void fi_fven_fork_prepare(void)
{
	pthread_mutex_lock(&fi_fven_lock);
}

static void fi_fven_fork_done(void)
{
	pthread_mutex_unlock(&fi_fven_lock);
}

__attribute__((constructor(FI_CTOR_FOREIGN))) static void fi_fven_fork_init(void)
{
	pthread_atfork(fi_fven_fork_prepare, fi_fven_fork_done, fi_fven_fork_done);
}

/* The veneer of @fn: found among the published ones, or published now. */
static void *fi_fx_veneer(uint64_t fn, const char *name)
{
	uint8_t slot[FI_FVEN_SLOT];
	uint64_t n, at, base, f;
	void *ret = (void *)(uintptr_t)fn;

	pthread_mutex_lock(&fi_fven_lock);
	if (!fi_fx_reserve())
		goto out;
	base = FI_FX()->fven_base;
	for (n = 0; n < FI_FVEN_MAX && (f = fi_fven_names[n].fn); n++) {
		if (f == fn) {
			ret = (void *)(uintptr_t)(base + n * FI_FVEN_SLOT +
						  FI_FVEN_ENTRY);
			goto out;
		}
	}
	if (n == FI_FVEN_MAX)
		goto out;	/* full: the plain pointer (checking callers trap) */
	at = base + n * FI_FVEN_SLOT;
	fi_emit_foreign_veneer(slot, fn);
	if (fi_fx_publish(at, slot, sizeof(slot), at % FI_PAGE == 0) ||
	    fi_fx_record(n, fn, name))
		goto out;
	ret = (void *)(uintptr_t)(at + FI_FVEN_ENTRY);
out:
	pthread_mutex_unlock(&fi_fven_lock);
	return ret;
}

bool fi_foreign_for_caller(const void *ret)
{
	return fi_rt()->active && fi_rt_module_at((uint64_t)(uintptr_t)ret);
}

/*
 * Code that jumps to a register, never a function to call through a
 * pointer: the indirect-branch thunks (any module's, the runtime's
 * exported ones among them), the runtime's coarse check and its BHI
 * stubs. A veneer is accepted by every check as a function of any type;
 * one in front of `jmp *%rax` would let a call reach any address. Their
 * plain address is handed out instead (a checking caller traps on it).
 * As the coarse check refuses the runtime's exports (coarsetrap.c). The
 * same for the functions that load rip and rsp from memory (longjmp,
 * setcontext and kin): behind a veneer, a call of any type with an
 * argument the attacker chose would go anywhere with any stack; stock
 * kCFI traps on such a call too (libc's functions carry no hash).
 */
static bool fi_foreign_is_branch(const char *name)
{
	static const char *const exact[] = {
		"__fineibt_coarse", "__bhi_args", "__bhi_args_end",
	};

	if (!name || !strncmp(name, "__x86_indirect_", 15) ||
	    !strncmp(name, "__x86_return_thunk", 18) || fi_flow_primitive(name))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (!strcmp(name, exact[i]))
			return true;
	}
	return false;
}

/*
 * libc's own dlsym (the runtime's exported dlsym is an interposer). Its
 * dlopen: the one recorded in the read-only state (dlhook.c), since a
 * versioned reference to dlopen does not link into a -static program.
 */
extern void *fi_fx_libc_dlsym(void *, const char *);
__asm__(".symver fi_fx_libc_dlsym, dlsym@GLIBC_2.2.5");

/*
 * libc's dlsym answer @p for @name is the object's l_addr (its link_map:
 * writable) plus the symbol's value, found through the link_map's
 * l_info (writable too): a forged link_map answers any address, and a
 * veneer would make it a target of every type. dladdr reads the same
 * link_map, so it names the forged answer as the export exactly; the
 * kernel then decides (fi_export_real): the answer must be at the file
 * offset that symbol's value maps to in the object's file, the symbol
 * one of the object's own and the name its own. A forged lookup
 * (another object's symbol table aimed at one of ours) can answer a real
 * export for another name: the export's own name must not be one that
 * never gets a veneer (longjmp for "abs"). An answer dladdr names no
 * export at exactly is an IFUNC's choice (its implementation has no
 * dynamic symbol), or a forged one: it is taken only when the object's
 * own read-only tables have @name as an IFUNC whose resolver answers
 * @p (fi_export_ifunc). Where the kernel cannot be asked (no /proc), as
 * before: the object dladdr puts it in, asked for @name, gives @p again.
 */
static bool fi_foreign_real(void *p, const char *name)
{
	const ElfW(Sym) *sym = NULL;
	void *(*open)(const char *, int);
	Dl_info info;
	void *h, *q;
	int ok;

	if (!dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    !info.dli_fname)
		return false;
	if (sym && info.dli_sname && info.dli_saddr == p)
		return !fi_foreign_is_branch(info.dli_sname) &&
		       fi_export_real((uint64_t)(uintptr_t)p, info.dli_fbase,
				      sym, info.dli_sname, false);
	if (!name)
		return false;
	ok = fi_export_ifunc((uint64_t)(uintptr_t)p, info.dli_fbase, name);
	if (ok != -ENODEV)
		return ok > 0;
	open = (void *(*)(const char *, int))__atomic_load_n(
		&fi_rt()->calls.real_dlopen, __ATOMIC_ACQUIRE);
	h = open ? open(info.dli_fname[0] ? info.dli_fname : NULL,
			RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (!h)
		return false;
	q = fi_fx_libc_dlsym(h, name);
	dlclose(h);
	return q == p;
}

/*
 * Has @fn a veneer already? Its record (never writable) says it passed
 * fi_foreign_real then: a second dlsym of the name costs no question to
 * the kernel.
 */
static bool fi_fx_has(uint64_t fn)
{
	uint64_t f;

	for (uint64_t i = 0; (f = fi_fx_slot_fn(i)); i++) {
		if (f == fn)
			return true;
	}
	return false;
}

void *fi_foreign_wrap(void *p, const char *name)
{
	uint64_t fn = (uint64_t)(uintptr_t)p;

	if (!p || fi_foreign_is_branch(name) || !fi_foreign_is_code(fn) ||
	    (!fi_fx_has(fn) && !fi_foreign_real(p, name)))
		return p;
	return fi_fx_veneer(fn, name);
}

bool fi_foreign_name_near(uint64_t addr, uint64_t after, uint64_t *start,
			  const char **name)
{
	const struct fi_fven_name *best = NULL;
	uint64_t f;

	for (uint64_t i = 0; (f = fi_fx_slot_fn(i)); i++) {
		if (f <= addr && f > after && addr - f < 0x10000 &&
		    (!best || f > best->fn))
			best = &fi_fven_names[i];
	}
	if (!best)
		return false;
	*start = best->fn;
	*name = best->name;
	return true;
}

/* ----------------------------------------------------------- call sites */

const uint8_t *fi_foreign_site_head(const uint8_t *bytes, uint64_t ip)
{
	uint64_t stub;

	if (!fi_decode_site_jmp(bytes, ip, &stub))
		return NULL;
	for (size_t i = 0; i < __atomic_load_n(&FI_FX()->nstub_pages, __ATOMIC_ACQUIRE); i++) {
		const __typeof__(FI_FX()->stub_pages[0]) *pg = &FI_FX()->stub_pages[i];

		if (stub >= pg->page && stub - pg->page < FI_PAGE &&
		    (stub - pg->page) % FI_FSTUB_SIZE == 0)
			return (const uint8_t *)(uintptr_t)stub;
	}
	return NULL;
}

/* A free stub slot within rel32 reach of [lo, hi), mapping a page if needed. */
static uint64_t fi_fx_stub_slot(uint64_t lo, uint64_t hi)
{
	static const uint8_t none[FI_FSTUB_SIZE];
	const struct fi_rt_foreign *fx = FI_FX();
	const struct fi_runtime *rt;
	sigset_t saved;
	uint64_t page;
	size_t n;

	for (size_t i = 0; i < fx->nstub_pages; i++) {
		if (fx->stub_pages[i].used < FI_PAGE &&
		    fi_live_in_reach(fx->stub_pages[i].page, FI_PAGE, lo, hi))
			return fx->stub_pages[i].page + fx->stub_pages[i].used;
	}
	if (fx->nstub_pages == FI_FSTUB_PAGES)
		return 0;
	page = fi_live_map_near(lo, hi, none, sizeof(none));
	if (!page || !(rt = fi_rt_write_begin(&saved)))
		return 0;
	n = rt->foreign.nstub_pages;
	if (n == FI_FSTUB_PAGES ||
	    FI_RT_PUT(rt->foreign.stub_pages[n].page, page) ||
	    FI_RT_PUT(rt->foreign.stub_pages[n].used, 0) ||
	    FI_RT_PUT(rt->foreign.nstub_pages, n + 1))
		page = 0;
	fi_rt_write_end(&saved);
	return page;
}

/* The page holding @stub has @len more bytes used (inside a window). */
static void fi_fx_page_use(uint64_t stub, uint64_t len)
{
	const struct fi_runtime *rt;
	sigset_t saved;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return;
	for (size_t i = 0; i < rt->foreign.nstub_pages; i++) {
		if (stub - rt->foreign.stub_pages[i].page < FI_PAGE)
			FI_RT_PUT(rt->foreign.stub_pages[i].used,
				  rt->foreign.stub_pages[i].used + len);
	}
	fi_rt_write_end(&saved);
}

/* Give the site at @site (of module @m) its stub; 0 or -errno. */
static int fi_fx_open_site(const struct fi_module *m, uint64_t site,
			   bool paranoid)
{
	uint8_t stub[FI_FSTUB_SIZE], jmp[5];
	const uint8_t *p = (const uint8_t *)(uintptr_t)site;
	uint64_t at, base = __atomic_load_n(&FI_FX()->fven_base, __ATOMIC_ACQUIRE);
	int err;

	/* Live bytes: only the holder of fi_fstub_busy writes a site. */
	if (fi_foreign_site_head(p, site))
		return 0;		/* another thread opened it */
	at = fi_fx_stub_slot(m->text_lo, m->text_hi);
	if (!at)
		return -ENOMEM;
	if (!fi_emit_foreign_stub(stub, p, site, at, paranoid,
				  base + FI_FVEN_ENTRY, FI_FVEN_REGION) ||
	    !fi_emit_site_jmp(jmp, site, at))
		return -ERANGE;
	err = fi_fx_publish(at, stub, sizeof(stub), false);
	if (err)
		return err;
	fi_fx_page_use(at, FI_FSTUB_SIZE);
	/* The stub is in place and sealed before any jump leads to it. */
	return fi_fx_publish(site, jmp, sizeof(jmp), false);
}

bool fi_foreign_take(const struct fi_trap *t, bool *opened)
{
	bool t_opened = false;

	const struct fi_module *m = t->mod;
	uint64_t site;
	bool paranoid;

	if (t->kind == FI_TRAP_KCFI) {
		site = t->addr - FI_KCFI_CALLER_UD;
		paranoid = false;
	} else if (t->kind == FI_TRAP_PARANOID) {
		site = t->addr - FI_PARANOID_UD;
		paranoid = true;
	} else {
		return false;
	}
	if (!m || !fi_foreign_is_veneer(t->target))
		return false;
	/*
	 * The call goes on either way; only one thread rewrites at a time.
	 * JIT code (jit.c registers it as "[jit]") belongs to its JIT, which
	 * may rewrite or free it: its sites are not opened, and take a
	 * signal per call to a veneer.
	 */
	*opened = false;
	if (m->img.path && !strcmp(m->img.path, "[jit]"))
		return true;
	if (!__atomic_exchange_n(&fi_fstub_busy, 1, __ATOMIC_ACQUIRE)) {
		t_opened = fi_fx_open_site(m, site, paranoid) == 0;
		__atomic_store_n(&fi_fstub_busy, 0, __ATOMIC_RELEASE);
	}
	*opened = t_opened;
	return true;
}

void fi_foreign_text_lock(void)
{
	while (__atomic_exchange_n(&fi_fstub_busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

void fi_foreign_text_unlock(void)
{
	__atomic_store_n(&fi_fstub_busy, 0, __ATOMIC_RELEASE);
}
