/* SPDX-License-Identifier: MIT */
/*
 * The process-wide runtime state (runtime.h): mode, key, the table of
 * registered modules and of BHI stub arrays, the program's SIGILL
 * disposition, and the arena holding the registered modules.
 *
 * A CFI runtime is only as strong as its own state: one write to a mode
 * byte would switch every check off. So, as the kernel keeps cfi_mode and
 * its rehash seed __ro_after_init, the state is read-only except inside a
 * short write window: block every signal in this thread, take the writer spin
 * lock, mprotect the pages to be written read-write (the first fields,
 * then the tables' pages as they are written), update, mprotect the whole
 * storage (and each arena chunk written) read-only in one call (which
 * does not depend on the record of what was opened: the kernel changes
 * only the mappings still read-write), unlock. Nothing here keeps a
 * writable copy of anything that decides whether or how a check is
 * enforced.
 *
 * Why page by page: changing the protection of a page that is present
 * costs a TLB invalidation per page (on a paravirtualised machine, about
 * as much as a page fault), so a window over the whole 80 KiB cost up
 * to 21 of them in each direction, most of a small program's start-up.
 *
 * Readers (the SIGILL handler, at any moment, in any thread, possibly
 * while a registration is half done) take no lock and never allocate:
 * fixed arrays, slot stores before the release-store of the count or of
 * the slot pointer, acquire loads on the reader side. The spin lock (not
 * a mutex) with signals blocked is what lets the handler itself open a
 * window (SA_RESETHAND) without deadlocking against its own thread.
 *
 * The state sits alone in page-aligned storage padded to whole pages (in
 * .bss, so it costs no file space), so its protection never touches
 * neighbouring data. A PROT_NONE guard page on either side (set up by the
 * first window) makes it a mapping of its own that never merges with its
 * neighbours: switching it between read-write and read-only then changes
 * a whole mapping, which needs no new one, so closing a window cannot fail
 * for want of a mapping slot (vm.max_map_count). Should closing fail all
 * the same, the process is terminated: the state never stays writable.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"

#define FI_PAGE		4096
#define FI_RT_BYTES	((sizeof(struct fi_runtime) + FI_PAGE - 1) & ~(size_t)(FI_PAGE - 1))

static struct {
	uint8_t guard_lo[FI_PAGE];
	union {
		struct fi_runtime rt;
		uint8_t pad[FI_RT_BYTES];
	} s;
	uint8_t guard_hi[FI_PAGE];
} fi_rt_area __attribute__((aligned(FI_PAGE), section(".bss.fineibt_rtstate")));
#define fi_rt_store	(fi_rt_area.s)
#define FI_RT_PAGES	(FI_RT_BYTES / FI_PAGE)
_Static_assert(FI_RT_PAGES <= 64, "fi_rt_wopen has a bit per page");
/* What every window opens: the fields before the tables (runtime.h). */
#define FI_RT_CORE	offsetof(struct fi_runtime, seen)
/* Where they start once the state is sealed: page 0 stays closed. */
#define FI_RT_HOT	offsetof(struct fi_runtime, wprobe)
_Static_assert(FI_RT_HOT == FI_PAGE, "the sealed page is page 0 alone");
/* Guards in place (re-done harmlessly if this word is ever reset). */
static bool fi_rt_guarded;
/*
 * The pages the current window made read-write (bit i: page i). Writable
 * memory, like the lock: a forged bit costs a write fault or a needless
 * mprotect; closing makes the whole state read-only whatever it says.
 */
static uint64_t fi_rt_wopen;

/* The one writable word: at worst a corrupted lock hangs a writer. */
static int fi_rt_wlock;
/* The forking thread's mask while it holds the lock across fork(). */
static sigset_t fi_rt_fork_mask;

/* src/seq/bhi.S */
extern const uint8_t __bhi_args[], __bhi_args_end[];

#define LOAD_ACQ(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

const struct fi_runtime *fi_rt(void)
{
	return &fi_rt_store.rt;
}

void *fi_rt_storage(size_t *size)
{
	if (size)
		*size = sizeof(fi_rt_store);
	return &fi_rt_store;
}

const uint8_t *fi_bhi_stubs(size_t *size)
{
	if (size)
		*size = (size_t)(__bhi_args_end - __bhi_args);
	return __bhi_args;
}

/* ------------------------------------------------------------ the window */

/*
 * LeakSanitizer reads every writable segment's pages at exit and dies on a
 * PROT_NONE page inside .bss: in sanitizer builds (SAN=1 tests, fuzz
 * harnesses) the guards are read-only instead. They still keep writes off
 * the state's neighbours, but merge with the read-only state, so opening a
 * window there needs a mapping slot (it fails cleanly when none is left).
 */
#if defined(__SANITIZE_ADDRESS__)
#define FI_GUARD_PROT	PROT_READ
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FI_GUARD_PROT	PROT_READ
#endif
#endif
#ifndef FI_GUARD_PROT
#define FI_GUARD_PROT	PROT_NONE
#endif

/* The guard pages around the state: done once, by the first window. */
static int fi_rt_guard(void)
{
	if (fi_rt_guarded)
		return 0;
	if (mprotect(fi_rt_area.guard_lo, FI_PAGE, FI_GUARD_PROT) ||
	    mprotect(fi_rt_area.guard_hi, FI_PAGE, FI_GUARD_PROT))
		return -1;
	fi_rt_guarded = true;
	return 0;
}

/*
 * A window that cannot be closed leaves the state writable for good: stop
 * the process rather than run on (one line, async-signal-safe, no atexit
 * handlers and no signal handler of the program runs).
 */
void fi_rt_die(const char *why)
{
	static const char pre[] = "fineibt: fatal: ", post[] = "; terminating\n";
	char line[256];
	size_t n = strnlen(why, sizeof(line) - sizeof(pre) - sizeof(post));

	/* One write: the line never interleaves with another thread's. */
	memcpy(line, pre, sizeof(pre) - 1);
	memcpy(line + sizeof(pre) - 1, why, n);
	memcpy(line + sizeof(pre) - 1 + n, post, sizeof(post) - 1);
	if (write(STDERR_FILENO, line, sizeof(pre) - 1 + n + sizeof(post) - 1) < 0)
		n = 0;	/* nowhere to say it: terminate all the same */
	for (;;)
		syscall(SYS_exit_group, FI_RT_DIE_STATUS);
}

/*
 * Windows nest within one thread (fi_rt_batch_begin/end: start-up's
 * consecutive windows become one): the thread holding the window lock
 * and its depth, both written only under the lock. Not thread-local
 * storage: the runtime may start inside an IFUNC resolver (load/rtearly.c),
 * before the loader has set up this library's TLS. The thread's identity
 * is pthread_self() (its thread pointer, set up before any relocation:
 * the mutex around start-up reads it too; no system call per nested
 * begin). A nested begin makes nothing writable itself, so a forged
 * owner or count gets a read-only state (the caller's write faults), and
 * fi_rt_write_open first writes to the first page, which only a real
 * window has opened.
 */
static long fi_rt_wowner;		/* pthread_self(), 0 when unlocked */
static unsigned int fi_rt_wdepth;

static long fi_rt_tid(void)
{
	return (long)pthread_self();
}

static uint64_t fi_rt_page_bits(size_t first, size_t last)
{
	size_t n = last - first + 1;

	return (n >= 64 ? ~0ull : (1ull << n) - 1) << first;
}

/*
 * Make pages [@first, @last] of the state read-write. Opening part of
 * the state splits its mapping, which needs mapping slots: when none is
 * left (vm.max_map_count), the whole state is opened instead, which
 * changes whole mappings and needs none (as every window did before).
 */
static int fi_rt_open_pages(size_t first, size_t last)
{
	uint8_t *base = (uint8_t *)&fi_rt_store;

	while (first <= last && (fi_rt_wopen >> first & 1))
		first++;
	while (last > first && (fi_rt_wopen >> last & 1))
		last--;
	if (first > last)
		return 0;
	if (!mprotect(base + first * FI_PAGE, (last - first + 1) * FI_PAGE,
		      PROT_READ | PROT_WRITE)) {
		fi_rt_wopen |= fi_rt_page_bits(first, last);
		return 0;
	}
	if (errno != ENOMEM ||
	    mprotect(base, FI_RT_BYTES, PROT_READ | PROT_WRITE))
		return -1;
	fi_rt_wopen = fi_rt_page_bits(0, FI_RT_PAGES - 1);
	return 0;
}

int fi_rt_write_open(const void *p, size_t len)
{
	uintptr_t base = (uintptr_t)&fi_rt_store, at = (uintptr_t)p;

	if (!fi_rt_wdepth)
		return -EPERM;
	/* Faults unless a window is really open (a forged depth is not). */
	__atomic_store_n(&fi_rt_store.rt.wprobe, 1, __ATOMIC_RELAXED);
	if (!len || at < base || at - base >= FI_RT_BYTES ||
	    len > FI_RT_BYTES - (at - base))
		return -EINVAL;
	if (fi_rt_open_pages((at - base) / FI_PAGE,
			     (at - base + len - 1) / FI_PAGE))
		return -errno;
	return 0;
}

int fi_rt_write_open_sealed(void)
{
	return fi_rt_write_open(&fi_rt_store.rt, FI_RT_HOT);
}

/*
 * Read-only again: all of it, in one call that does not depend on the
 * record of what was opened. The kernel changes (and walks the page
 * tables of) only the mappings that are read-write, i.e. the pages the
 * window opened, and leaves the read-only ones alone: the same work as
 * closing each opened run, without a system call per run.
 */
static int fi_rt_close_pages(void)
{
	fi_rt_wopen = 0;
	return mprotect(&fi_rt_store, FI_RT_BYTES, PROT_READ) ? -1 : 0;
}

struct fi_runtime *fi_rt_write_begin(sigset_t *saved)
{
	long owner = __atomic_load_n(&fi_rt_wowner, __ATOMIC_RELAXED);
	sigset_t all;
	int err;

	/* Asked of the kernel only when some window is open. */
	if (owner && owner == fi_rt_tid()) {
		fi_rt_wdepth++;
		return &fi_rt_store.rt;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, saved);
	while (__atomic_exchange_n(&fi_rt_wlock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	/* The last window closed all of it. */
	fi_rt_wopen = 0;
	/*
	 * The sealed page only while start-up writes it; after that a
	 * writer of one of its fields opens it itself (fi_rt_write_open).
	 */
	if (fi_rt_guard() ||
	    fi_rt_open_pages(LOAD_ACQ(&fi_rt_store.rt.sealed) ? FI_RT_HOT / FI_PAGE : 0,
			     (FI_RT_CORE - 1) / FI_PAGE)) {
		err = errno;
		__atomic_store_n(&fi_rt_wlock, 0, __ATOMIC_RELEASE);
		pthread_sigmask(SIG_SETMASK, saved, NULL);
		errno = err;
		return NULL;
	}
	fi_rt_wdepth = 1;
	__atomic_store_n(&fi_rt_wowner, fi_rt_tid(), __ATOMIC_RELAXED);
	return &fi_rt_store.rt;
}

void fi_rt_write_end(const sigset_t *saved)
{
	int err = errno;

	if (fi_rt_wdepth > 1) {
		fi_rt_wdepth--;
		return;
	}
	fi_rt_wdepth = 0;
	__atomic_store_n(&fi_rt_wowner, 0, __ATOMIC_RELAXED);

	/*
	 * Neither can fail for want of a mapping slot (closing only merges
	 * mappings between guard pages, above and rtarena.c); if either
	 * fails all the same, the state or a module would stay writable:
	 * stop.
	 */
	if (fi_arena_close(&fi_rt_store.rt.arena))
		fi_rt_die("cannot make the runtime's module arena read-only again");
	if (fi_rt_close_pages())
		fi_rt_die("cannot make the runtime state read-only again");
	__atomic_store_n(&fi_rt_wlock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
	errno = err;
}

/*
 * fork() while another thread is inside a window would leave the child
 * with the lock taken forever (and the state possibly writable): take the
 * lock around fork, so the child starts with a closed window and a free
 * lock. Signals stay blocked meanwhile, as in any window.
 */
static void fi_rt_fork_prepare(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fi_rt_fork_mask);
	while (__atomic_exchange_n(&fi_rt_wlock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void fi_rt_fork_done(void)
{
	__atomic_store_n(&fi_rt_wlock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &fi_rt_fork_mask, NULL);
}

/*
 * Registered before every other constructor of the library (a priority
 * runs first): pthread_atfork calls prepare handlers in the reverse order
 * of registration, so the locks of higher layers registered later (the
 * dlsym veneer lock, src/trap/foreign.c), which are taken before this
 * one, are also taken before it at fork.
 */
__attribute__((constructor(200))) static void fi_rt_fork_init(void)
{
	pthread_atfork(fi_rt_fork_prepare, fi_rt_fork_done, fi_rt_fork_done);
}

/* ----------------------------------------------------------------- mode */

int fi_rt_set_config(const struct fineibt_config *cfg,
		     const struct fineibt_key *key, bool have_arity)
{
	struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (rt->sealed) {
		ret = -EPERM;
	} else {
		rt->cfg = *cfg;
		rt->key = *key;
		rt->have_arity = have_arity;
		rt->secure = getauxval(AT_SECURE) != 0;
		rt->configured = true;
	}
	fi_rt_write_end(&saved);
	return ret;
}

int fi_rt_set_cache(const struct fi_rt_cache *c)
{
	struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (rt->sealed)
		ret = -EPERM;
	else
		rt->cache = *c;
	fi_rt_write_end(&saved);
	return ret;
}

int fi_rt_set_active(bool active)
{
	struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (rt->sealed && !active)
		ret = -EPERM;
	else if (LOAD_ACQ(&rt->active) != active &&
		 !(ret = fi_rt_write_open_sealed()))
		STORE_REL(&rt->active, active);
	fi_rt_write_end(&saved);
	return ret;
}

void fi_rt_seal(void)
{
	struct fi_runtime *rt;
	sigset_t saved;

	rt = fi_rt_write_begin(&saved);
	if (rt) {
		if (!rt->sealed && !fi_rt_write_open_sealed())
			rt->sealed = true;
		fi_rt_write_end(&saved);
	}
}

/* ---------------------------------------------------------------- modules */

static bool fi_rt_has_module(const struct fi_runtime *rt, const void *key)
{
	for (size_t i = 0; i < rt->nmods && i < FI_MAX_SLOTS; i++) {
		if (rt->mods[i] && (rt->mods[i]->key == key || rt->mods[i] == key))
			return true;
	}
	return false;
}

/* A free slot in [@base, @base + @n) (deleted or never used); -1 if full. */
static long fi_rt_mod_slot(const struct fi_runtime *rt, size_t base, size_t n)
{
	for (size_t i = base; i < base + n; i++) {
		if (i >= rt->nmods || !rt->mods[i])
			return (long)i;
	}
	return -1;
}

static int fi_rt_add_as(struct fi_module *m, bool jit)
{
	struct fi_runtime *rt;
	struct fi_module *copy;
	sigset_t saved;
	long slot;
	int ret = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt) {
		ret = -errno;
		goto scrub;
	}
	slot = jit ? fi_rt_mod_slot(rt, FI_MAX_MODULES, FI_MAX_JIT) :
		     fi_rt_mod_slot(rt, 0, FI_MAX_MODULES);
	if (fi_rt_has_module(rt, m)) {
		ret = -EEXIST;
	} else if (slot < 0) {
		ret = -ENOSPC;
	} else if (!(copy = fi_arena_freeze(&rt->arena, m))) {
		ret = -ENOMEM;
	} else if ((ret = fi_rt_write_open(&rt->mods[slot], sizeof(copy)))) {
		/* The copy stays in the arena, unused. */
	} else {
		/* Key, then the copy, then the count that makes readers look. */
		copy->key = m;
		STORE_REL(&rt->mods[slot], copy);
		if ((size_t)slot >= rt->nmods)
			STORE_REL(&rt->nmods, (size_t)slot + 1);
	}
	fi_rt_write_end(&saved);
scrub:
	/*
	 * The caller's copy is writable memory: the key leaves it whether or
	 * not the module got a slot (the rewrite that needed it is done; a
	 * failed registration's copy would otherwise keep it, then be freed
	 * with it still in the heap). Not a registered copy handed back to
	 * us: that one lives in the read-only arena and is the key's home.
	 */
	if (!fi_arena_owns(&fi_rt_store.rt.arena, m, sizeof(*m))) {
		memset(&m->rehash_key, 0, sizeof(m->rehash_key));
		memset(&m->img.note.key, 0, sizeof(m->img.note.key));
		__asm__ volatile("" ::: "memory");
	}
	return ret;
}

int fi_rt_add_module(struct fi_module *m)
{
	return fi_rt_add_as(m, false);
}

int fi_rt_add_jit(struct fi_module *m)
{
	return fi_rt_add_as(m, true);
}

const struct fi_module *fi_rt_module_of(const void *key)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		if (m && m->key == key)
			return m;
	}
	return NULL;
}

int fi_rt_del_module(const struct fi_module *m)
{
	struct fi_runtime *rt;
	sigset_t saved;
	int ret = -ENOENT;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	for (size_t i = 0; i < rt->nmods && i < FI_MAX_SLOTS; i++) {
		if (rt->mods[i] && (rt->mods[i]->key == m || rt->mods[i] == m)) {
			ret = fi_rt_write_open(&rt->mods[i], sizeof(rt->mods[i]));
			if (!ret)
				STORE_REL(&rt->mods[i], NULL);
			break;
		}
	}
	fi_rt_write_end(&saved);
	return ret;
}

/* Async-signal-safe: no lock, acquire loads only. */
const struct fi_module *fi_rt_module_at(uint64_t addr)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		/*
		 * Only a copy the arena handed out is a module: a pointer put
		 * here from anywhere else (a write racing a window) is not.
		 */
		if (m && addr >= m->text_lo && addr < m->text_hi &&
		    fi_arena_owns(&rt->arena, m, sizeof(*m)))
			return m;
	}
	return NULL;
}

/* ------------------------------------------------------------ the scans */

size_t fi_rt_seen_add(const struct fi_rt_seen *e, size_t n)
{
	struct fi_runtime *rt;
	sigset_t saved;
	size_t i = 0, done = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return 0;
	for (; done < n && e[done].key; done++) {
		while (i < FI_MAX_SEEN && i < rt->nseen && rt->seen[i].key)
			i++;
		if (i == FI_MAX_SEEN ||
		    fi_rt_write_open(&rt->seen[i], sizeof(rt->seen[i])))
			break;
		/* Everything, then the key that makes readers look. */
		rt->seen[i] = e[done];
		rt->seen[i].key = 0;
		STORE_REL(&rt->seen[i].key, e[done].key);
		if (i >= rt->nseen)
			STORE_REL(&rt->nseen, i + 1);
	}
	fi_rt_write_end(&saved);
	return done;
}

size_t fi_rt_seen_set(const struct fi_rt_seen *e, size_t n)
{
	struct fi_runtime *rt;
	sigset_t saved;
	size_t done = 0;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return 0;
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; e[k].key && i < rt->nseen; i++) {
			if (rt->seen[i].key != e[k].key)
				continue;
			if (fi_rt_write_open(&rt->seen[i], sizeof(rt->seen[i])))
				break;
			rt->seen[i].mod = e[k].mod;
			rt->seen[i].fp = e[k].fp;
			rt->seen[i].fp_set = true;
			done++;
			break;
		}
	}
	fi_rt_write_end(&saved);
	return done;
}

void fi_rt_seen_drop(size_t i)
{
	struct fi_runtime *rt;
	sigset_t saved;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return;
	if (i < rt->nseen && rt->seen[i].key &&
	    !fi_rt_write_open(&rt->seen[i], sizeof(rt->seen[i]))) {
		const struct fi_module *m = rt->seen[i].mod;

		STORE_REL(&rt->seen[i].key, 0);
		for (size_t k = 0; m && k < FI_MAX_MODULES && k < rt->nmods; k++) {
			if (rt->mods[k] == m &&
			    !fi_rt_write_open(&rt->mods[k], sizeof(rt->mods[k])))
				STORE_REL(&rt->mods[k], NULL);
		}
		rt->seen[i] = (struct fi_rt_seen){ 0 };
	}
	fi_rt_write_end(&saved);
}

/* Whether a recorded rewritten range overlaps [@lo, @hi). */
static bool fi_rt_seen_overlaps(uint64_t lo, uint64_t hi)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = LOAD_ACQ(&rt->nseen);

	for (size_t i = 0; i < n && i < FI_MAX_SEEN; i++) {
		const struct fi_rt_seen *e = &rt->seen[i];

		if (LOAD_ACQ(&e->key) && lo < e->hi && e->lo < hi)
			return true;
	}
	return false;
}

bool fi_rt_rewritten_at(uint64_t addr)
{
	return fi_rt_seen_overlaps(addr, addr + 1);
}

/*
 * Read by the SIGILL handler: the record and the lists it points to are
 * read-only, so a write cannot make a check of such a module look like a
 * plain ud2 (which would go to the program's handler).
 */
bool fi_rt_compiled_trap(uint64_t addr)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = LOAD_ACQ(&rt->nseen);

	for (size_t i = 0; i < n && i < FI_MAX_SEEN; i++) {
		const struct fi_rt_seen *e = &rt->seen[i];
		uint64_t key = LOAD_ACQ(&e->key), off = addr - key;
		size_t lo = 0, hi = e->nctraps;

		if (!key || !e->ctraps || addr < key || off > UINT32_MAX)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (e->ctraps[mid] == off)
				return true;
			if (e->ctraps[mid] < off)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return false;
}

/*
 * True if [@lo, @hi) overlaps the text of a registered module or a range
 * the runtime rewrote: code that is not the JIT's to register.
 */
bool fi_rt_range_owned(uint64_t lo, uint64_t hi)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = LOAD_ACQ(&rt->nmods);

	for (size_t i = 0; i < n && i < FI_MAX_MODULES; i++) {
		const struct fi_module *m = LOAD_ACQ(&rt->mods[i]);

		if (m && lo < m->text_hi && m->text_lo < hi)
			return true;
	}
	return fi_rt_seen_overlaps(lo, hi);
}

/* -------------------------------------------------------------- BHI stubs */

static bool fi_rt_in(uint64_t addr, uint64_t base, uint64_t size)
{
	return addr >= base && addr - base < size;
}

static int fi_rt_add_stubs_locked(struct fi_runtime *rt, uint64_t base,
				  uint64_t size)
{
	size_t i, slot = FI_MAX_MODULES;

	for (i = 0; i < rt->nstubs; i++) {
		if (rt->stubs[i] == base)
			return -EEXIST;
		if (!rt->stubs[i] && slot == FI_MAX_MODULES)
			slot = i;
	}
	if (slot == FI_MAX_MODULES) {
		if (rt->nstubs >= FI_MAX_MODULES)
			return -ENOSPC;
		slot = rt->nstubs;
	}
	if (fi_rt_write_open(&rt->stub_size[slot], sizeof(rt->stub_size[slot])) ||
	    fi_rt_write_open(&rt->stubs[slot], sizeof(rt->stubs[slot])))
		return -errno;
	/*
	 * Size, then base, then the count: a reader that sees a non-zero base
	 * also sees its size. Deleted slots read base 0 and are skipped.
	 */
	STORE_REL(&rt->stub_size[slot], size);
	STORE_REL(&rt->stubs[slot], base);
	if (slot == rt->nstubs)
		STORE_REL(&rt->nstubs, rt->nstubs + 1);
	return 0;
}

static int fi_rt_add_stubs_as(uint64_t base, uint64_t size, bool copy)
{
	struct fi_runtime *rt;
	sigset_t saved;
	size_t want;
	int ret;

	fi_bhi_stubs(&want);
	if (!base || size != want)
		return -EINVAL;
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	if (copy && rt->nstub_copies == FI_MAX_MODULES)
		ret = -ENOSPC;
	else if (copy && fi_rt_write_open(&rt->stub_copies[rt->nstub_copies],
					  sizeof(rt->stub_copies[0])))
		ret = -errno;
	else
		ret = fi_rt_add_stubs_locked(rt, base, size);
	if (!ret && copy)
		rt->stub_copies[rt->nstub_copies++] = base;
	fi_rt_write_end(&saved);
	return ret;
}

int fi_rt_add_stubs(uint64_t base, uint64_t size)
{
	return fi_rt_add_stubs_as(base, size, false);
}

int fi_rt_add_stub_copy(uint64_t base, uint64_t size)
{
	return fi_rt_add_stubs_as(base, size, true);
}

int fi_rt_del_stubs(uint64_t base)
{
	struct fi_runtime *rt;
	sigset_t saved;
	int ret = -ENOENT;

	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -errno;
	for (size_t i = 0; i < rt->nstubs; i++) {
		if (base && rt->stubs[i] == base) {
			ret = fi_rt_write_open(&rt->stubs[i], sizeof(rt->stubs[i]));
			if (!ret)
				STORE_REL(&rt->stubs[i], 0);
			break;
		}
	}
	fi_rt_write_end(&saved);
	return ret;
}

/* Async-signal-safe: no lock, acquire loads only. */
uint64_t fi_rt_bhi_base(uint64_t addr)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	uint64_t own = (uint64_t)(uintptr_t)__bhi_args;
	size_t n = LOAD_ACQ(&rt->nstubs);

	if (fi_rt_in(addr, own, (uint64_t)(__bhi_args_end - __bhi_args)))
		return own;
	for (size_t i = 0; i < n; i++) {
		uint64_t base = LOAD_ACQ(&rt->stubs[i]);

		if (base && fi_rt_in(addr, base, LOAD_ACQ(&rt->stub_size[i])))
			return base;
	}
	return 0;
}

/* ------------------------------------------------------------ hygiene */

/*
 * The key travels through locals of the patching code (the patch
 * options, the rehash loop): once those frames are popped their bytes
 * are still in the stack, writable and readable by the program. Wipe
 * up to FI_SCRUB_DEPTH below the caller, which covers the deepest
 * start-up and dlopen patching paths (docs/protection.md), but never
 * past the low end of the stack the caller runs on: a thread created
 * with a 16 KiB stack may dlopen a library, and the memory below its
 * stack is its guard page or another thread's stack.
 */
#define FI_SCRUB_DEPTH	(32 * 1024)

/* The program's initial stack: its top (ld.so) and its size limit. */
extern void *__libc_stack_end;

/*
 * The lowest address the stack holding @sp may be written at, or 0 when
 * @sp is on no stack we know the bounds of (a coroutine's stack the
 * program allocated, which may be the middle of its heap).
 */
static uintptr_t fi_rt_stack_floor(uintptr_t sp)
{
	uintptr_t top = (uintptr_t)__libc_stack_end, lo;
	size_t reach;
	struct rlimit rl;
	pthread_attr_t a;
	size_t size;
	void *addr;

	if (getpid() == (pid_t)syscall(SYS_gettid)) {
		/*
		 * Not pthread_getattr_np: for the initial thread it reads
		 * /proc/self/maps, at every start-up. The stack's mapping
		 * may grow to RLIMIT_STACK below its top, of which the
		 * arguments and environment (above __libc_stack_end) take
		 * at most a quarter (ARG_MAX), the auxiliary vector and
		 * alignment a few pages more.
		 */
		if (getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur == RLIM_INFINITY)
			rl.rlim_cur = 8u << 20;
		reach = rl.rlim_cur / 4 * 3;
		if (reach <= 64 * 1024 || top < reach)
			return 0;
		lo = top - reach + 64 * 1024;
		return sp > lo && sp <= top ? lo : 0;
	}
	if (pthread_getattr_np(pthread_self(), &a))
		return 0;
	if (pthread_attr_getstack(&a, &addr, &size))
		size = 0;
	pthread_attr_destroy(&a);
	/* [addr, addr + size) excludes the guard page (glibc). */
	lo = (uintptr_t)addr;
	return size && sp > lo && sp <= lo + size ? lo : 0;
}

/*
 * Zero [lo, hi), which lies below the stack pointer: no call, no frame.
 * Eight bytes a step, then the tail: one instruction per byte (each step
 * of a rep prefix retires as one) was most of the wipe's cost.
 */
static void fi_rt_wipe_below_sp(uintptr_t lo, uintptr_t hi)
{
	void *dst = (void *)lo;
	size_t q = (hi - lo) / 8, r = (hi - lo) % 8;

	__asm__ volatile("rep stosq" : "+D"(dst), "+c"(q) : "a"(0) : "memory");
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(r) : "a"(0) : "memory");
}

__attribute__((noinline)) void fi_rt_scrub_stack(void)
{
	unsigned char in[FI_SCRUB_DEPTH / 4096 + 2];
	uintptr_t sp, floor, lo, end, page;

	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	floor = fi_rt_stack_floor(sp);
	if (!floor)
		return;
	/* Stay clear of our own red zone and of the frames of the calls above. */
	end = (sp - 512) & ~(uintptr_t)15;
	lo = end - FI_SCRUB_DEPTH > floor && end > FI_SCRUB_DEPTH ?
	     end - FI_SCRUB_DEPTH : floor;
	if (lo >= end)
		return;
	/*
	 * Only the pages that exist: a stack page never touched holds no
	 * secret, and touching it just to clear it costs a page fault
	 * (about 15 us each on a virtual machine), most of the start-up
	 * of a small program. A signal delivered meanwhile puts its frame
	 * below the stack pointer, over the part being wiped: it is done
	 * with it before the wipe resumes.
	 */
	page = lo & ~(uintptr_t)4095;
	if (mincore((void *)page, end - page, in)) {
		/*
		 * Part of the range is not mapped (ENOMEM): a main stack not
		 * grown that far, or valgrind's own stack for the program.
		 * Wipe downwards while the pages are mapped and resident;
		 * writing below them would grow the stack or fault.
		 */
		for (uintptr_t a = (end - 1) & ~(uintptr_t)4095; a >= page; a -= 4096) {
			unsigned char one;

			if (mincore((void *)a, 4096, &one) || !(one & 1))
				break;
			fi_rt_wipe_below_sp(a < lo ? lo : a, a + 4096 > end ? end : a + 4096);
			if (a < 4096)
				break;
		}
		return;
	}
	for (size_t i = 0; page + i * 4096 < end; i++) {
		uintptr_t a = page + i * 4096, b = a + 4096;

		if (!(in[i] & 1))
			continue;
		fi_rt_wipe_below_sp(a < lo ? lo : a, b > end ? end : b);
	}
}
