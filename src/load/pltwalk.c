// SPDX-License-Identifier: MIT
/*
 * The PLT pass over the loaded modules: at the end of start-up and after
 * every dlopen, each module whose GOT stays writable has its PLT entries
 * made direct by the interposition layer (src/interpose/plt.c, called by
 * name: src/rt/upcall.h), so that a write to its GOT redirects no PLT
 * jump (docs/protection.md, "A writable GOT"). This file walks the
 * modules, remembers which need no second look, and says what it did
 * under FINEIBT_VERBOSE; start.c decides when the pass may run
 * (fi_rt_plt_pass) and calls fi_plt_walk under its lock.
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "print.h"
#include "rtlive.h"
#include "runtime.h"
#include "upcall.h"

/*
 * Direct PLT entries (src/interpose/plt.c) for every module whose GOT stays
 * writable (partial RELRO, -z lazy, -z norelro): run where every slot
 * the loader will bind for them may be bound (our constructor, after a
 * dlopen returned), never while the runtime may still rebind one (the
 * early start: dlsym & co. wait for the constructor). A module whose
 * writable slots all no longer matter is not looked at again (@fi_plt_rec,
 * by record index; forgotten when any module is unloaded).
 */
struct fi_rt_plt_walk {
	uint64_t (*xr)[2];
	size_t nxr, cap;
};
/*
 * A pass's memory, on its stack: room for the executable ranges of a
 * process of a few modules and for the fixes of a module of up to 64 PLT
 * entries (two fixes of 24 bytes an entry: libc's 53 take 2.5 KiB). The
 * 32 KiB buffer a pass used to take from the heap, sized for the most
 * modules and the largest PLT, cost a start-up three fresh heap pages
 * (page faults) for a handful of entries; more ranges are taken from the
 * heap (fi_rt_plt_ranges), and a larger module's fixes from a mapping
 * of their size (src/interpose/plt.c).
 */
#define FI_PLT_XR_LOCAL		16
#define FI_PLT_FIX_LOCAL	(3 * 1024 / 8)
struct fi_rt_plt_mem {
	uint64_t xr[FI_PLT_XR_LOCAL][2];
	uint64_t fixes[FI_PLT_FIX_LOCAL];
};
/*
 * A pass's own state, on its stack: not in the walk's buffer above, which
 * another thread could write. Signals are blocked, and fi_live_alone asked,
 * once a pass, at the first module with entries to look at.
 */
struct fi_rt_plt_arg {
	struct fi_rt_plt_walk w;
	struct fi_rt_plt_mem *mem;
	bool ranged, inwin;
	struct fi_plt_pass p;
	sigset_t old;
};
/*
 * By record index: done and warned tags; where PLT0 was (link-time: no
 * run-time code address kept), valid for tag htag. One array of records,
 * not four arrays: a start-up touches the first few records only, one
 * .bss page instead of three.
 */
static struct fi_plt_rec {
	uint32_t done, warned, htag, hint;
} fi_plt_rec[FI_MAX_SEEN];
static unsigned long long fi_plt_subs;

static uint64_t fi_rt_info_key(const struct dl_phdr_info *info, uint64_t *end)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			*end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			return info->dlpi_addr + ph->p_vaddr;
		}
	}
	return 0;
}

/*
 * The ranges are memory another thread may write (protect_escape's writer
 * writes the heap; a stack can be reached too): the count is read once
 * and bounded before it indexes anything, so a forged one can only drop
 * or overwrite entries inside the buffer, never write past it. Past the
 * buffer's room, ranges are only counted (@nxr grows, nothing is stored),
 * so that the caller can take a buffer of the right size.
 */
static int fi_rt_xr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_rt_plt_walk *w = arg;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		size_t n = __atomic_load_n(&w->nxr, __ATOMIC_RELAXED);

		if (n >= FI_MAX_SEEN)
			break;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (n < w->cap) {
			w->xr[n][0] = info->dlpi_addr + ph->p_vaddr;
			w->xr[n][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
		__atomic_store_n(&w->nxr, n + 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/*
 * The executable ranges, collected at the first module that needs them
 * (the walk's lock is recursive): in the pass's stack buffer, or, for a
 * process of more than FI_PLT_XR_LOCAL of them, counted there and taken
 * again into a heap buffer of their number (no mapping of its own: an
 * mmap and a munmap, with its TLB flush). Code addresses are wiped from
 * either before the pass returns (fi_plt_walk, and plt.c the fixes it
 * made), so none stays readable. NULL if they cannot be collected.
 */
static struct fi_rt_plt_walk *fi_rt_plt_ranges(struct fi_rt_plt_arg *a)
{
	struct fi_rt_plt_walk *w = &a->w;
	size_t n;

	if (a->ranged)
		return w->xr ? w : NULL;
	a->ranged = true;
	*w = (struct fi_rt_plt_walk){ .xr = a->mem->xr, .cap = FI_PLT_XR_LOCAL };
	dl_iterate_phdr(fi_rt_xr_cb, w);
	n = __atomic_load_n(&w->nxr, __ATOMIC_RELAXED);
	if (n <= FI_PLT_XR_LOCAL)
		return w;
	fi_rt_wipe(a->mem->xr, sizeof(a->mem->xr));
	n = n < FI_MAX_SEEN ? n : FI_MAX_SEEN;
	/* a module loaded meanwhile is one more: room for a few */
	n = n + 8 < FI_MAX_SEEN ? n + 8 : FI_MAX_SEEN;
	*w = (struct fi_rt_plt_walk){ .xr = malloc(n * sizeof(w->xr[0])), .cap = n };
	if (!w->xr)
		return NULL;
	dl_iterate_phdr(fi_rt_xr_cb, w);
	return w;
}

static const char *fi_rt_info_name(const struct dl_phdr_info *info)
{
	static char exe[4096];

	if (info->dlpi_name && *info->dlpi_name)
		return info->dlpi_name;
	if (!exe[0])
		fi_rt_exe_path(exe, sizeof(exe));
	return exe[0] ? exe : "the executable";
}

static const char *fi_rt_plt_why(const struct fi_plt_result *r)
{
	return r->unknown ? "PLT layout not recognised" :
	       r->textrel ? "it has text relocations" :
	       r->err ? strerror(-r->err) :
	       r->busy ? "lazy binding, with other threads running" :
	       "not bound yet";
}

static void fi_rt_plt_say(const struct dl_phdr_info *info, long k,
			  uint32_t tag, const struct fi_plt_result *r)
{
	size_t left = r->slots > r->direct ? r->slots - r->direct : 0;
	const struct fi_rt_seen *e = &fi_rt()->seen[k];

	if (r->made)
		fi_say("fineibt: %s: %zu PLT entries made direct (its GOT "
		       "is writable; they no longer read it)\n",
		       fi_rt_info_name(info), r->made);
	if (!left || fi_plt_rec[k].warned == tag)
		return;
	fi_plt_rec[k].warned = tag;
	/*
	 * Not a kCFI module (libc, a Debian library run directly): its lazy
	 * slots are the norm there, not a finding about the program; said
	 * without "warning".
	 */
	if (!e->lo && !e->nctraps) {
		fi_say("fineibt: %s: %zu of its %zu PLT entries still read "
		       "its writable GOT (%s)\n", fi_rt_info_name(info),
		       left, r->slots, fi_rt_plt_why(r));
		return;
	}
	fi_say("fineibt: warning: %s: its GOT is writable (partial RELRO "
	       "or -z norelro) and %zu of its %zu PLT entries still jump "
	       "through it (%s): a write there redirects a PLT jump, which "
	       "no mode checks (run with LD_BIND_NOW=1, or relink with -z "
	       "relro -z now)\n", fi_rt_info_name(info), left, r->slots,
	       fi_rt_plt_why(r));
}

static int fi_rt_plt_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fi_rt_plt_arg *a = arg;
	struct fi_rt_plt_walk *w;
	struct fi_plt_result r;
	uint64_t end = 0, key = fi_rt_info_key(info, &end);
	long k = key ? fi_rt_seen_find(key) : -1;
	uint32_t tag = (uint32_t)(key >> 12) | 1;
	uint64_t hint;
	size_t nxr;

	if (info->dlpi_subs != fi_plt_subs) {
		memset(fi_plt_rec, 0, sizeof(fi_plt_rec));
		fi_plt_subs = info->dlpi_subs;
	}
	/*
	 * Every module, kCFI or not: libc's own PLT (its string functions,
	 * IRELATIVE) and a Debian library's are as writable as a kCFI
	 * module's, and a jump through them is checked by nothing either.
	 */
	if (k < 0 || fi_plt_rec[k].done == tag)
		return 0;
	/* Full RELRO (fineibt-cc's default): nothing to do, ever. */
	if (!fi_plt_any_writable(info)) {
		fi_plt_rec[k].done = tag;
		return 0;
	}
	w = fi_rt_plt_ranges(a);
	if (!w)
		return 0;
	/* Inside start-up's last window, written in place: its proofs
	 * stand (the signals blocked, the process alone, the descriptor). */
	if (!a->p.held && (a->p.mem = fi_rt_window_alone_fd()) >= 0) {
		a->p.held = a->p.alone = a->inwin = true;
		a->p.buf = a->mem->fixes;
		a->p.cap = sizeof(a->mem->fixes);
	}
	if (!a->p.held) {
		sigset_t all;

		sigfillset(&all);
		a->p.held = !pthread_sigmask(SIG_SETMASK, &all, &a->old);
		a->p.alone = a->p.held && fi_live_alone();
		/* One fstat a pass: the number may have been closed and
		 * reused since the last window (a daemon closing its
		 * descriptors). */
		a->p.mem = a->p.alone ? fi_rt_mem_fd() : -1;
		a->p.buf = a->mem->fixes;
		a->p.cap = sizeof(a->mem->fixes);
	}
	hint = fi_plt_rec[k].htag == tag ? fi_plt_rec[k].hint : 0;
	nxr = __atomic_load_n(&w->nxr, __ATOMIC_RELAXED);
	fi_plt_direct(info, (const uint64_t (*)[2])w->xr,
		      nxr < w->cap ? nxr : w->cap, &hint, &a->p, &r);
	fi_plt_rec[k].htag = hint && hint <= UINT32_MAX ? tag : 0;
	fi_plt_rec[k].hint = (uint32_t)hint;
	if (fi_verbose_on())
		fi_rt_plt_say(info, k, tag, &r);
	if (r.direct >= r.slots || r.unknown || r.textrel)
		fi_plt_rec[k].done = tag;
	return 0;
}

void fi_plt_walk(bool startup)
{
	struct fi_rt_plt_mem mem;
	struct fi_rt_plt_arg a = { .mem = &mem, .p.startup = startup };

	dl_iterate_phdr(fi_rt_plt_cb, &a);
	if (a.p.held && !a.inwin)
		pthread_sigmask(SIG_SETMASK, &a.old, NULL);
	/* Code addresses: wiped (the ranges; plt.c wiped its fixes). */
	if (a.w.xr) {
		size_t nxr = __atomic_load_n(&a.w.nxr, __ATOMIC_RELAXED);

		fi_rt_wipe(a.w.xr, (nxr < a.w.cap ? nxr : a.w.cap) *
			   sizeof(a.w.xr[0]));
		if (a.w.xr != mem.xr)
			free(a.w.xr);
	}
}
