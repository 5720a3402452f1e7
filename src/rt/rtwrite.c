// SPDX-License-Identifier: MIT
/*
 * Where the runtime's trusted memory lives and how it is written
 * (docs/protection.md, "Writing the state through the kernel").
 *
 * The state block, the arena of registered modules and every region made
 * by fi_rt_map_protected are read-only, sealed (mseal) where the kernel
 * has it, and never writable in this process once start-up's first window
 * has closed: from then on no page table the process runs on maps them
 * writable, not even for a moment. They are written with pwrite() on a
 * descriptor of
 * /proc/self/mem: the kernel writes into the read-only page (as it does
 * for a debugger), the userspace counterpart of the kernel's text_poke
 * writing through a temporary mm no other CPU runs. A racing thread with
 * a write primitive therefore finds nothing writable, at any time; what it
 * can still forge is what a writer computes its bytes from (its heap
 * scratch), which is why records built from scratch are verified after
 * they are written (rtverify.c).
 *
 * A /proc/self/mem descriptor writes the memory of the process that
 * opened it, whoever uses it: a fork child holding the inherited one
 * would write its parent's state. So the descriptor is used only by the
 * process that opened it: an owner token on a page of its own, wiped in
 * a fork child (MADV_WIPEONFORK) and itself read-only, says whether this
 * is that process; a fork child closes the inherited descriptors and
 * opens its own. Every window also asks the kernel (fstat) whether the
 * number still names that file: a daemon may have closed it and opened
 * something else on the number.
 *
 * Where the descriptor cannot be had at start-up (no /proc, a process
 * that cannot open its own mem file, a kernel that refuses FOLL_FORCE
 * writes), the state is written as before this design: the pages a window
 * writes are made read-write for the window and read-only after
 * (fi_rt_poke). That is the weaker property (a write racing a window
 * lands), said once under FINEIBT_VERBOSE and in docs/protection.md.
 *
 * The first window (docs/protection.md, "The first window"): when the
 * start path has said that no code of the program has run and none can
 * run inside it (fi_rt_first_unrun), and the kernel says no other task
 * shares the address space (fi_rt_alone, with every signal blocked),
 * the state's block (its arena's first chunk included) is left the
 * writable .bss the loader mapped until that window ends: fi_rt_put
 * stores into it, and the window's end makes it read-only and seals it,
 * once. Where the start rewrites text between its record and its
 * registration, it holds the block writable across the rewrite
 * (fi_rt_inplace_hold): each window after the first asks fi_rt_alone
 * again as it opens (not alone: sealed there), and the registration
 * window's end seals it; fi_rt_inplace_seal ends start-up whatever
 * happened. Only the runtime's own instructions run meanwhile, in the
 * one thread there is, so nothing else could have written it either
 * way; what is checked where it landed is still checked. The token's
 * page is read-only and sealed from the first window's start, its
 * pwrite the probe that the kernel's writer works, as in every other
 * start. Every window after start-up writes through the kernel.
 *
 * Windows: every signal blocked in the writing thread, one spin lock (the
 * only writable word that matters: docs/protection.md's table), nesting
 * within a thread (fi_rt_batch_begin/end). All of it async-signal-safe:
 * the SIGILL handler writes too (SA_RESETHAND, a dlsym veneer's site).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctor.h"
#include "rawsys.h"
#include "runtime.h"

#define FI_PAGE		4096
#define FI_RT_BYTES	((sizeof(struct fi_runtime) + FI_PAGE - 1) & ~(size_t)(FI_PAGE - 1))
#define FI_OWN_MAGIC	0x6669696274776e72ull	/* any non-zero value */

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK	18
#endif
#ifndef SYS_pwrite64
#define SYS_pwrite64	18
#endif

/*
 * The owner token: zero in a fork child (its page is wiped on fork), or,
 * where the kernel cannot wipe it, the pid of the process that opened the
 * descriptors (asked of the kernel at each window then).
 */
struct fi_rt_own {
	uint64_t magic;
	int32_t pid;
};

static struct {
	uint8_t guard_lo[FI_PAGE];
	/*
	 * The arena's first chunk (rtarena.c): where a start's few small
	 * copies go (a hello's registered copy and coarse table, ~1 KiB)
	 * without a mapping of their own. Read-only and sealed with the
	 * state, written only by fi_rt_put like any chunk; a page of it is
	 * committed only once written (docs/bench.md, "The arena's first
	 * chunk in the state's block").
	 */
	uint8_t arena0[FI_RT_ARENA0];
	union {
		struct fi_runtime rt;
		uint8_t pad[FI_RT_BYTES];
	} s;
	union {
		struct fi_rt_own own;
		uint8_t pad[FI_PAGE];
	} o;
	uint8_t guard_hi[FI_PAGE];
} fi_rt_area __attribute__((aligned(FI_PAGE), section(".bss.fineibt_rtstate")));
#define fi_rt_store	(fi_rt_area.s)
/*
 * Where coarse.S finds the known-entry table: a pointer to the state's
 * field, itself in RELRO (read-only once the loader relocated it).
 */
const struct fi_coarse *const *const fi_rt_coarse_slot
	__attribute__((used)) = &fi_rt_area.s.rt.coarse;
#define FI_RT_PAGES	(FI_RT_BYTES / FI_PAGE)

/*
 * The one writable word that orders writers, and the window's owner and
 * depth (written only under the lock). A forged lock lets two of the
 * runtime's own writers run at once (docs/protection.md, "What stays
 * writable"); a forged owner or depth makes fi_rt_put run without the
 * lock, or refuse: either way only values the writers computed are
 * written, and only into the runtime's own regions.
 */
static int fi_rt_wlock;
static long fi_rt_wowner;		/* pthread_self(), 0 when unlocked */
static unsigned int fi_rt_wdepth;
/* The forking thread's mask while it holds the lock across fork(). */
static sigset_t fi_rt_fork_mask;
/*
 * Without the kernel's writer (fi_rt_poke): the regions the current
 * window made writable (bit 0 the state, 1 + i arena chunk i, 1 +
 * FI_ARENA_CHUNKS + j extra region j). Writable like the lock: a forged
 * bit costs a needless mprotect, a cleared one leaves a region writable
 * until the next window closes it, in a mode that promises no more.
 */
#define FI_RT_WIN_BITS	(1 + FI_ARENA_CHUNKS + FI_RT_REGIONS)
static uint64_t fi_rt_wopen[(FI_RT_WIN_BITS + 63) / 64];
/* The state's pages it opened (bit i: page i), and the last page range
 * opened in any other region: a put there needs no mprotect of its own. */
static uint64_t fi_rt_wpages;
static uintptr_t fi_rt_wlast_lo, fi_rt_wlast_hi;
/* fi_rt_setup ran: the state is protected (fi_rt_populate's cue). */
static bool fi_rt_wsetup;
/*
 * fi_rt_first_unrun's word, for the first window only (fi_rt_setup
 * clears it). Writable: before it is set no code of the program has run,
 * and after the first window nothing reads it.
 */
static bool fi_rt_unrun;
/*
 * The first window was written in place (fi_rt_unrun, and alone): said
 * to the stack scrub of the same start (fi_rt_first_inplace_take), which
 * takes it back. Writable: it lives only from the first window to that
 * scrub, in which only the runtime's code runs; forged later, the most a
 * scrub does with it is zero the resident pages up to 32 KiB below the
 * stack pointer, which a write primitive that could forge it does.
 */
static bool fi_rt_unrun_inplace;
/*
 * The start path's word (fi_rt_inplace_hold): another start-up window
 * follows, so a window written in place leaves the block writable at its
 * end. Read only while wr.inplace, which the block's seal clears for good.
 */
static bool fi_rt_hold;
_Static_assert(FI_RT_PAGES <= 64, "a bit per page of the state");

const struct fi_runtime *fi_rt(void)
{
	return &fi_rt_store.rt;
}

void fi_rt_first_unrun(void)
{
	fi_rt_unrun = true;
}

bool fi_rt_first_unrun_said(void)
{
	return fi_rt_unrun;
}

bool fi_rt_first_inplace_take(void)
{
	bool was = fi_rt_unrun_inplace;

	fi_rt_unrun_inplace = false;
	return was;
}

void fi_rt_inplace_hold(bool on)
{
	fi_rt_hold = on;
}

uint8_t *fi_rt_arena_first(size_t *size)
{
	*size = sizeof(fi_rt_area.arena0);
	return fi_rt_area.arena0;
}

void *fi_rt_storage(size_t *size)
{
	if (size)
		*size = sizeof(fi_rt_store);
	return &fi_rt_store;
}

/*
 * Test builds only (tests/lib/rtdebug.c defines them): park the writer at
 * WHERE, and make /proc/self/mem unavailable. These do nothing here, and
 * are never called in an AT_SECURE process.
 */
__attribute__((weak)) void fi_rt_park(const char *where, const void *scratch,
				      size_t len)
{
	(void)where;
	(void)scratch;
	(void)len;
}

__attribute__((weak)) bool fi_rt_hook_no_procmem(void)
{
	return false;
}

/*
 * A write the runtime cannot make, or a record it cannot trust, leaves
 * the state unknown: stop the process rather than run on (one line,
 * async-signal-safe, no atexit or signal handler of the program runs).
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
	/* Both made directly (rawsys.h): in libfineibt.a, libc's write is
	 * whatever the program or an LD_PRELOAD library defines. */
	if (fi_raw_write(STDERR_FILENO, line,
			 sizeof(pre) - 1 + n + sizeof(post) - 1) < 0)
		n = 0;	/* nowhere to say it: terminate all the same */
	for (;;)
		fi_sys3(SYS_exit_group, FI_RT_DIE_STATUS, 0, 0);
}

/* ------------------------------------------------------- the guards */

/*
 * The guards are read-only, not PROT_NONE: they sit inside this module's
 * writable PT_LOAD segment (.bss), and whatever walks a module's writable
 * segments with dl_iterate_phdr takes every page there to be readable:
 * LeakSanitizer's exit-time scan of globals in any -fsanitize=address
 * program (its stop-the-world tracer dies on the first unreadable page),
 * conservative collectors (Boehm GC), core dumpers. Read-only guards
 * still keep every write off the state's neighbours; MADV_DONTDUMP (the
 * lower) and MADV_WIPEONFORK (the upper, with the token's page) keep the
 * state a mapping of its own (the kernel merges no two mappings whose
 * flags differ, and a guard holds only zeros).
 */
#define FI_GUARD_PROT	PROT_READ

/* --------------------------------------------------- the descriptors */

static bool fi_rt_same_file(int fd, uint64_t dev, uint64_t ino)
{
	struct stat st;

	return fd >= 0 && !fi_raw_fstat(fd, &st) && (uint64_t)st.st_dev == dev &&
	       (uint64_t)st.st_ino == ino;
}

/* Open @path as a descriptor the runtime keeps; -errno. */
static int fi_rt_keep_open(const char *path, int flags, uint64_t *dev,
			   uint64_t *ino)
{
	struct stat st;
	long fd = fi_fd_above_stdio(fi_sys_open(path, flags | O_CLOEXEC, 0));

	if (fd < 0)
		return (int)fd;
	if (fi_raw_fstat((int)fd, &st)) {
		fi_raw_close((int)fd);
		return -EBADF;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return (int)fd;
}

long fi_rt_pwrite(int fd, const void *src, size_t len, const void *dst)
{
	const uint8_t *s = src;
	uint64_t at = (uint64_t)(uintptr_t)dst;

	while (len) {
		long n = fi_sys6(SYS_pwrite64, fd, (long)s, (long)len, (long)at,
				 0, 0);

		if (n == -EINTR)
			continue;
		if (n <= 0)
			return n ? n : -EIO;
		s += n;
		at += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The descriptors of a fork child's parent (inherited, still naming the
 * parent's memory): closed in the child, before anything else runs
 * (pthread_atfork) or, after a raw clone, at its first window.
 */
static void fi_rt_drop_inherited(void)
{
	const struct fi_rt_wr *w = &fi_rt_store.rt.wr;

	/* Not asked what it is (only PROCMAP_QUERY is sent to it): the
	 * number is closed when the mem one was the inherited file. */
	if (fi_rt_same_file(w->mem_fd, w->mem_dev, w->mem_ino)) {
		fi_raw_close(w->mem_fd);
		if (w->maps_fd >= 0)
			fi_raw_close(w->maps_fd);
	}
}

bool fi_rt_own_here(void)
{
	const struct fi_rt_own *o = &fi_rt_area.o.own;

	return fi_rt_store.rt.wr.how == FI_RT_KERNEL &&
	       __atomic_load_n(&o->magic, __ATOMIC_ACQUIRE) == FI_OWN_MAGIC &&
	       (!o->pid || o->pid == (int32_t)fi_sys3(SYS_getpid, 0, 0, 0));
}

/* Are the descriptors in the state this process's, and still open? */
static bool fi_rt_own_ok(void)
{
	const struct fi_rt_wr *w = &fi_rt_store.rt.wr;

	return fi_rt_own_here() &&
	       fi_rt_same_file(w->mem_fd, w->mem_dev, w->mem_ino);
}

int fi_rt_mem_fd(void)
{
	return fi_rt_own_ok() ? fi_rt_store.rt.wr.mem_fd : -1;
}

/*
 * (Re)open the descriptors and record them, inside a window. In a fork
 * child (no token) the inherited ones are closed first. The first time,
 * also the mode and the seal, and @unrun, the start path's proof
 * (fi_rt_first_unrun). -errno when /proc/self/mem cannot be opened
 * or written through.
 */
static int fi_rt_own_open(bool wipe, bool first, bool inplace, bool unrun)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	struct fi_rt_wr w = rt->wr;
	struct fi_rt_own o = { .magic = FI_OWN_MAGIC };
	long err;
	int fd;

	if (fi_rt_hook_no_procmem())
		return -EACCES;
	/* The first time the state is as the loader zeroed it: no parent's
	 * descriptor to close (and no fstat of descriptor 0 to find that). */
	if (!first &&
	    __atomic_load_n(&fi_rt_area.o.own.magic, __ATOMIC_ACQUIRE) != FI_OWN_MAGIC)
		fi_rt_drop_inherited();
	/*
	 * Not the first time: the area was made read-only (and sealed) by
	 * the first window, so this changes nothing (or is refused: sealed).
	 * Unless wr.how was forged before start-up, in the loader's writable
	 * .bss (a resolver's or a preload's one byte): the first window then
	 * took the state as set up and it stayed writable for good (found by
	 * attack: tests/e2e/protect_inplace.sh, pre[MODE]). No system call in
	 * a start: only a fork child or a reopened descriptor comes here.
	 */
	if (!first)
		mprotect(&fi_rt_area, sizeof(fi_rt_area), FI_GUARD_PROT);
	fd = fi_rt_keep_open("/proc/self/mem", O_RDWR, &w.mem_dev, &w.mem_ino);
	if (fd < 0)
		return fd;
	w.mem_fd = fd;
	/* For the kernel's view of mappings (rtverify.c); not required. */
	fd = (int)fi_fd_above_stdio(fi_sys_open("/proc/self/maps",
						O_RDONLY | O_CLOEXEC, 0));
	w.maps_fd = fd >= 0 ? fd : -1;
	if (!wipe)
		o.pid = (int32_t)fi_sys3(SYS_getpid, 0, 0, 0);
	/* The start path's proof, from the first window only: a later one
	 * (a fork child's, or a state whose wr.how was forged before the
	 * start: above) keeps no word it did not see said. */
	w.unrun = first && unrun;
	/* The token first: it is also the probe that such writes work. */
	err = fi_rt_pwrite(w.mem_fd, &o, sizeof(o), &fi_rt_area.o.own);
	if (!err && first) {
		/* Sealed (Linux 6.10+): no mprotect, munmap or mremap can
		 * take these pages away or make them writable again. In
		 * place, the token's page and the upper guard now, the rest
		 * at the window's end (fi_rt_inplace_end). */
		w.how = FI_RT_KERNEL;
		w.inplace = inplace;
		w.sealed = inplace ?
			!fi_sys3(SYS_mseal, (long)&fi_rt_area.o, 2 * FI_PAGE, 0) :
			!fi_sys3(SYS_mseal, (long)&fi_rt_area, sizeof(fi_rt_area), 0);
	}
	if (!err && inplace)
		fi_rt_store.rt.wr = w;
	else if (!err)
		err = fi_rt_pwrite(w.mem_fd, &w, sizeof(w), &rt->wr);
	if (err) {
		fi_raw_close(w.mem_fd);
		if (w.maps_fd >= 0)
			fi_raw_close(w.maps_fd);
		return (int)err;
	}
	return 0;
}

/* --------------------------------------------------------- the regions */

/* Is [@p, @p + @len) inside [@base, @base + @size)? */
static bool fi_rt_within(uintptr_t p, size_t len, uintptr_t base, size_t size)
{
	return p >= base && p - base <= size && size - (p - base) >= len;
}

/*
 * The region holding [@p, @p + @len): its window bit, base and size; -1
 * if it is none of the runtime's (fi_rt_put writes nowhere else).
 */
static int fi_rt_region_of(const void *p, size_t len, uintptr_t *base,
			   size_t *size)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	uintptr_t a = (uintptr_t)p;
	size_t n;

	*base = (uintptr_t)&fi_rt_store;
	*size = FI_RT_BYTES + FI_PAGE;		/* the state and the token */
	if (fi_rt_within(a, len, *base, *size))
		return 0;
	n = __atomic_load_n(&rt->arena.nchunks, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < n && i < FI_ARENA_CHUNKS; i++) {
		*base = (uintptr_t)rt->arena.chunk[i].base;
		*size = rt->arena.chunk[i].size;
		if (fi_rt_within(a, len, *base, *size))
			return (int)(1 + i);
	}
	n = __atomic_load_n(&rt->wr.nregions, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < n && i < FI_RT_REGIONS; i++) {
		*base = (uintptr_t)rt->wr.region[i].base;
		*size = rt->wr.region[i].size;
		if (fi_rt_within(a, len, *base, *size))
			return (int)(1 + FI_ARENA_CHUNKS + i);
	}
	return -1;
}

/*
 * Without the kernel's writer: make the pages of [@dst, @dst + @len)
 * read-write until the window ends, then copy. Opening part of a region
 * splits its mapping, which needs mapping slots: with none left
 * (vm.max_map_count) the whole region is opened, a whole mapping between
 * guard pages, which needs none.
 */
static bool fi_rt_poke_open(int bit, uintptr_t lo, uintptr_t hi, uintptr_t base)
{
	uint64_t pages = 0;

	if (bit) {
		if (fi_rt_wlast_lo <= lo && hi <= fi_rt_wlast_hi)
			return true;
		fi_rt_wlast_lo = lo;
		fi_rt_wlast_hi = hi;
		return false;
	}
	for (uintptr_t p = lo; p < hi; p += FI_PAGE)
		pages |= 1ull << ((p - base) / FI_PAGE);
	if ((fi_rt_wpages & pages) == pages)
		return true;
	fi_rt_wpages |= pages;
	return false;
}

static int fi_rt_poke(int bit, uintptr_t base, size_t size, void *dst,
		      const void *src, size_t len)
{
	uintptr_t lo = (uintptr_t)dst & ~(uintptr_t)(FI_PAGE - 1);
	uintptr_t hi = ((uintptr_t)dst + len + FI_PAGE - 1) & ~(uintptr_t)(FI_PAGE - 1);

	if (!fi_rt_poke_open(bit, lo, hi, base)) {
		fi_rt_wopen[bit / 64] |= 1ull << (bit % 64);
		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) &&
		    (errno != ENOMEM ||
		     mprotect((void *)base, size, PROT_READ | PROT_WRITE)))
			return -errno;
		if (bit) {
			fi_rt_wlast_lo = lo;
			fi_rt_wlast_hi = hi;
		}
	}
	memcpy(dst, src, len);
	return 0;
}

/* Close what fi_rt_poke opened: whole regions, which needs no slot. */
static int fi_rt_unpoke(void)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	int ret = 0;

	for (int bit = 0; bit < FI_RT_WIN_BITS; bit++) {
		uint64_t w = fi_rt_wopen[bit / 64] >> (bit % 64);
		void *base;
		size_t size;

		/* The kernel's writer opens nothing: no bit is ever set. */
		if (!w) {
			bit |= 63;
			continue;
		}
		if (!(w & 1)) {
			bit += __builtin_ctzll(w) - 1;
			continue;
		}
		if (!bit) {
			base = &fi_rt_store;
			size = FI_RT_BYTES;
		} else if (bit <= FI_ARENA_CHUNKS) {
			base = rt->arena.chunk[bit - 1].base;
			size = rt->arena.chunk[bit - 1].size;
		} else {
			base = (void *)(uintptr_t)rt->wr.region[bit - 1 - FI_ARENA_CHUNKS].base;
			size = rt->wr.region[bit - 1 - FI_ARENA_CHUNKS].size;
		}
		if (mprotect(base, size, PROT_READ))
			ret = -1;
	}
	memset(fi_rt_wopen, 0, sizeof(fi_rt_wopen));
	fi_rt_wpages = 0;
	fi_rt_wlast_lo = fi_rt_wlast_hi = 0;
	return ret;
}

/* -------------------------------------------------------------- puts */

/*
 * Is [@dst, @dst + @len) in the part of the block the first window leaves
 * writable: the arena's first chunk and the state (not the token's page)?
 */
static bool fi_rt_in_block(const void *dst, size_t len)
{
	uintptr_t lo = (uintptr_t)fi_rt_area.arena0;

	return fi_rt_within((uintptr_t)dst, len, lo,
			    (uintptr_t)&fi_rt_area.o - lo);
}

static long fi_rt_tid(void)
{
	return (long)pthread_self();
}

bool fi_rt_writing(void)
{
	return fi_rt_wdepth &&
	       __atomic_load_n(&fi_rt_wowner, __ATOMIC_RELAXED) == fi_rt_tid();
}

static int fi_rt_put_as(const void *dst, const void *src, size_t len,
			const char *scratch)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	uintptr_t base;
	size_t size;
	int bit;

	if (!len)
		return 0;
	if (!fi_rt_writing())
		return -EPERM;
	bit = fi_rt_region_of(dst, len, &base, &size);
	if (bit < 0)
		return -EFAULT;
	if (scratch)
		fi_rt_park(scratch, src, len);
	if (rt->wr.inplace && fi_rt_in_block(dst, len)) {
		memcpy((void *)dst, src, len);
		return 0;
	}
	if (rt->wr.how == FI_RT_KERNEL)
		return (int)fi_rt_pwrite(rt->wr.mem_fd, src, len, dst);
	return fi_rt_poke(bit, base, size, (void *)dst, src, len);
}

int fi_rt_put(const void *dst, const void *src, size_t len)
{
	return fi_rt_put_as(dst, src, len, NULL);
}

int fi_rt_put_scratch(const void *dst, const void *src, size_t len)
{
	return fi_rt_put_as(dst, src, len, "put");
}

int fi_rt_put_module(const void *dst, const void *src, size_t len)
{
	return fi_rt_put_as(dst, src, len, "put module");
}

/* ----------------------------------------------------------- set-up */

/*
 * Does no other task share the address space? unshare(CLONE_VM) is
 * refused (EINVAL) when one does, and changes nothing otherwise; any
 * other refusal counts as not alone. The question rt/rtlive.c's
 * fi_live_alone asks, made here: rtlive.c is above this file.
 */
static bool fi_rt_alone(void)
{
	return fi_sys3(SYS_unshare, CLONE_VM, 0, 0) == 0;
}

/*
 * The first window: the state read-only for good (with its guards and
 * the token page), the descriptors opened and tried, the whole area
 * sealed. Without /proc/self/mem: the windows of fi_rt_poke, the area
 * not sealed (they need mprotect). Written in place (fi_rt_unrun, and
 * no other task): only the token's page and the upper guard now, the
 * rest when the window ends (fi_rt_inplace_end).
 */
static int fi_rt_setup(void)
{
	struct fi_rt_wr w = { .how = FI_RT_WINDOWS, .mem_fd = -1, .maps_fd = -1 };
	size_t lo_len = (uintptr_t)&fi_rt_area.o - (uintptr_t)&fi_rt_area;
	bool unrun = fi_rt_unrun, wipe, inplace = unrun && fi_rt_alone();
	int err;

	fi_rt_wsetup = true;
	fi_rt_unrun = false;
	fi_rt_unrun_inplace = inplace;
	/* The guards' protection over all of it, then the middle (one call
	 * while the guards are read-only like the middle). */
	if (inplace) {
		if (mprotect(&fi_rt_area.o, 2 * FI_PAGE, FI_GUARD_PROT))
			return -errno;
	} else if (mprotect(&fi_rt_area, sizeof(fi_rt_area), FI_GUARD_PROT) ||
		   (FI_GUARD_PROT != PROT_READ &&
		    mprotect(&fi_rt_store, FI_RT_BYTES + FI_PAGE, PROT_READ))) {
		return -errno;
	}
	/* The token's page and the upper guard (adjacent) are wiped on
	 * fork in one call: the guard holds zeros, as a wiped page reads,
	 * and the flag keeps it a mapping apart from the state as well as
	 * MADV_DONTDUMP did. Where the kernel cannot wipe, DONTDUMP. */
	if (!inplace)
		madvise(fi_rt_area.guard_lo, FI_PAGE, MADV_DONTDUMP);
	wipe = !madvise(&fi_rt_area.o, 2 * FI_PAGE, MADV_WIPEONFORK);
	if (!wipe)
		madvise(fi_rt_area.guard_hi, FI_PAGE, MADV_DONTDUMP);
	err = fi_rt_own_open(wipe, true, inplace, unrun);
	if (!err)
		return 0;
	/* The weaker windows: said once, at start-up (start.c). */
	w.err = -err;
	fi_rt_wopen[0] = 1;
	fi_rt_wpages = ~0ull;
	if (inplace) {
		if (mprotect(&fi_rt_area, lo_len, FI_GUARD_PROT))
			return -errno;
		madvise(fi_rt_area.guard_lo, FI_PAGE, MADV_DONTDUMP);
	}
	if (mprotect(&fi_rt_store, FI_RT_BYTES, PROT_READ | PROT_WRITE))
		return -errno;
	w.unrun = unrun;
	fi_rt_store.rt.wr = w;
	return 0;
}

/*
 * The end of a first window written in place: the block below the
 * token's page read-only and sealed, as the rest of the area has been
 * since the window opened. From here on it is written through the
 * kernel only. A state left writable could be forged: stop if it cannot
 * be protected.
 */
static void fi_rt_inplace_end(void)
{
	size_t lo_len = (uintptr_t)&fi_rt_area.o - (uintptr_t)&fi_rt_area;
	struct fi_rt_wr *w = &fi_rt_store.rt.wr;
	bool off = false;

	w->inplace = false;
	if (mprotect(&fi_rt_area, lo_len, FI_GUARD_PROT))
		fi_rt_die("cannot make the runtime state read-only");
	madvise(fi_rt_area.guard_lo, FI_PAGE, MADV_DONTDUMP);
	/* The token's page took the seal: so does the rest (a kernel that
	 * refuses it now says so in the state). */
	if (w->sealed && fi_sys3(SYS_mseal, (long)&fi_rt_area, (long)lo_len, 0) &&
	    fi_rt_pwrite(w->mem_fd, &off, sizeof(off), &w->sealed))
		fi_rt_die("cannot record the runtime state's seal");
}

/* The window's own proofs: it asked fi_rt_alone as it opened; the
 * descriptor is the first window's, and only the runtime ran since. */
int fi_rt_window_alone_fd(void)
{
	const struct fi_rt_wr *w = &fi_rt_store.rt.wr;

	return fi_rt_writing() && w->inplace && w->how == FI_RT_KERNEL ?
	       w->mem_fd : -1;
}

/*
 * Start-up is over, whatever path it took: a block still written in
 * place (a start that failed between the windows it held open) is made
 * read-only and sealed now, before any code of the program runs.
 */
void fi_rt_inplace_seal(void)
{
	sigset_t saved;

	fi_rt_hold = false;
	if (!fi_rt_store.rt.wr.inplace)
		return;
	/* A window that cannot open has sealed it already (its error path). */
	if (fi_rt_write_begin(&saved))
		fi_rt_write_end(&saved);
}

/* ------------------------------------------------------------ the window */

static void fi_rt_unlock(const sigset_t *saved)
{
	__atomic_store_n(&fi_rt_wlock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

const struct fi_runtime *fi_rt_write_begin(sigset_t *saved)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	long owner = __atomic_load_n(&fi_rt_wowner, __ATOMIC_RELAXED);
	sigset_t all;
	int err = 0;

	/* Nested in this thread's window: nothing to do. */
	if (owner && owner == fi_rt_tid()) {
		fi_rt_wdepth++;
		return rt;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, saved);
	while (__atomic_exchange_n(&fi_rt_wlock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	memset(fi_rt_wopen, 0, sizeof(fi_rt_wopen));
	fi_rt_wpages = 0;
	fi_rt_wlast_lo = fi_rt_wlast_hi = 0;
	fi_rt_wdepth = 1;
	__atomic_store_n(&fi_rt_wowner, fi_rt_tid(), __ATOMIC_RELAXED);
	if (!rt->wr.how)
		err = fi_rt_setup();
	else if (rt->wr.inplace && !fi_rt_alone())
		/* A later start-up window, the block still writable: another
		 * task now shares the address space, so seal it here and
		 * write through the kernel (docs/protection.md). */
		fi_rt_inplace_end();
	else if (rt->wr.how == FI_RT_KERNEL && !fi_rt_own_ok())
		err = fi_rt_own_open(!fi_rt_area.o.own.pid, false, false, false);
	if (err) {
		/* Nothing was written: the state stays as it was, but a
		 * block held writable is closed now. */
		if (rt->wr.inplace)
			fi_rt_inplace_end();
		fi_rt_unpoke();
		fi_rt_wdepth = 0;
		__atomic_store_n(&fi_rt_wowner, 0, __ATOMIC_RELAXED);
		fi_rt_unlock(saved);
		errno = -err;
		return NULL;
	}
	fi_rt_park("window", NULL, 0);
	return rt;
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
	if (fi_rt_store.rt.wr.inplace && !fi_rt_hold)
		fi_rt_inplace_end();
	/* Left writable, the state could be forged: stop rather than run on. */
	if (fi_rt_unpoke())
		fi_rt_die("cannot make the runtime state read-only again");
	fi_rt_unlock(saved);
	errno = err;
}

/*
 * A region of @size bytes (whole pages) that only fi_rt_put writes, like
 * the arena: mapped read-only between two guard pages, sealed with the
 * state. Inside a window; NULL and errno when it cannot be made.
 */
void *fi_rt_map_protected(size_t size)
{
	const struct fi_runtime *rt = &fi_rt_store.rt;
	size_t n = rt->wr.nregions;
	uint8_t *p;

	if (!fi_rt_writing() || n >= FI_RT_REGIONS) {
		errno = ENOSPC;
		return NULL;
	}
	size = (size + FI_PAGE - 1) & ~(size_t)(FI_PAGE - 1);
	p = fi_rt_map_sealed(size);
	if (!p)
		return NULL;
	if (FI_RT_PUT(rt->wr.region[n].size, size) ||
	    FI_RT_PUT(rt->wr.region[n].base, (uint64_t)(uintptr_t)p) ||
	    FI_RT_PUT(rt->wr.nregions, n + 1)) {
		errno = EPERM;
		return NULL;	/* the mapping stays, unused */
	}
	return p;
}

void *fi_rt_map_sealed(size_t size)
{
	uint8_t *p = mmap(NULL, size + 2 * FI_PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + FI_PAGE, size, PROT_READ)) {
		munmap(p, size + 2 * FI_PAGE);
		return NULL;
	}
	if (fi_rt_store.rt.wr.sealed)
		fi_sys3(SYS_mseal, (long)p, (long)(size + 2 * FI_PAGE), 0);
	return p + FI_PAGE;
}

/* ------------------------------------------------------------------ fork */

/*
 * fork() while another thread is inside a window would leave the child
 * with the lock taken forever: the forking thread takes it around fork,
 * so the child starts with a closed window and a free lock. The child
 * then closes the descriptors it inherited (they write the parent's
 * memory) before the program runs on; its first window opens its own.
 */
static void fi_rt_fork_prepare(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fi_rt_fork_mask);
	while (__atomic_exchange_n(&fi_rt_wlock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void fi_rt_fork_parent(void)
{
	__atomic_store_n(&fi_rt_wlock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &fi_rt_fork_mask, NULL);
}

static void fi_rt_fork_child(void)
{
	if (fi_rt_store.rt.wr.how == FI_RT_KERNEL &&
	    (!fi_rt_area.o.own.magic ||
	     (fi_rt_area.o.own.pid &&
	      fi_rt_area.o.own.pid != (int32_t)fi_sys3(SYS_getpid, 0, 0, 0))))
		fi_rt_drop_inherited();
	fi_rt_fork_parent();
}

/*
 * The state's first two pages (its sealed page and page 1: every
 * start-up writes both) present before anything reads them. Read first,
 * a page of .bss is the kernel's zero page (a fault), and the first
 * pwrite then copies it (a second); populated, the one allocation is all
 * (docs/bench.md, "What a start touches"). Nothing is written: the pages
 * hold the zeros they held, and the state is still the .bss the loader
 * mapped, not yet protected. Not after an early start (before any
 * constructor) or libfineibt.a's preinit entry: the first window has
 * protected the state then. A kernel without MADV_POPULATE_WRITE (before
 * 5.14) refuses the call, changing nothing.
 */
static void fi_rt_populate(void)
{
	if (!fi_rt_wsetup)
		fi_prefault_pages(&fi_rt_store, 2);
}

/*
 * Registered before the library's other fork handlers (src/rt/ctor.h):
 * pthread_atfork calls prepare handlers in the reverse order of
 * registration, so the locks of higher layers registered later (the
 * dlsym veneer lock, src/interpose/foreign.c), which are taken before this
 * one, are also taken before it at fork.
 */
__attribute__((constructor(FI_CTOR_RTWRITE))) static void fi_rt_fork_init(void)
{
	pthread_atfork(fi_rt_fork_prepare, fi_rt_fork_parent, fi_rt_fork_child);
	fi_rt_populate();
}
