// SPDX-License-Identifier: MIT
/*
 * Rewriting a module loaded in this process, without ever making its text
 * writable and executable at once (W^X), and placing the BHI stubs within
 * rel32 reach of it.
 *
 * With other tasks present, the text is never written in place: each
 * executable segment's pages are copied into a fresh anonymous read-write
 * mapping, the image's exec views are pointed at the copy, the passes run
 * on the copy, the copy is made read-execute, and mremap(MREMAP_FIXED)
 * moves it over the original range.
 * That last step swaps the whole range in one system call: another thread
 * sees either the old text or the new one, never a half-written sequence
 * and never a page without execute permission. It is also what makes it
 * safe to patch the executable that contains this very code (static
 * libfineibt.a): the bytes of the runtime itself are the same in both
 * copies, so the thread doing the mremap returns into identical code.
 *
 * When no other task shares the address space (every start-up; a dlopen
 * in a single-threaded program) only the pages holding a site are
 * touched, and written in place: each run of them read-write (never
 * executable meanwhile), patched, read-execute again. Nobody can see the
 * text half old, half new, or a page without execute permission, in
 * between; the pages without a site stay the file's. A module holding
 * code that this thread runs meanwhile (the runtime itself, with
 * -static-fineibt) gets a copy of those pages instead, one mremap per run.
 *
 * A process that may not make memory executable once it was written
 * (PR_SET_MDWE, systemd's MemoryDenyWriteExecute=) gets the copy written
 * over its text through /proc/self/mem instead (fi_live_patch_mem): the
 * text stays read-execute throughout, as the PLT pass's writes do.
 *
 * The cost is that the patched pages become private memory instead of
 * shared page cache (docs/runtime.md has the numbers).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "patch.h"
#include "print.h"
#include "rawsys.h"
#include "rtlive.h"
#include "runtime.h"
#include "variant.h"

#define FI_PAGE		4096ULL
/* Keep every rel32 a little inside its +-2 GiB. */
#define FI_REACH	((1ULL << 31) - (1ULL << 20))

static uint64_t fi_page_down(uint64_t a)
{
	return a & ~(FI_PAGE - 1);
}

static uint64_t fi_page_up(uint64_t a)
{
	return (a + FI_PAGE - 1) & ~(FI_PAGE - 1);
}

void fi_live_text_range(const struct fi_image *im, uint64_t *lo,
			uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < im->nviews; i++) {
		const struct fi_view *v = &im->views[i];
		uint64_t a = v->vaddr + im->bias;

		if (!v->exec || !v->size)
			continue;
		if (a < *lo)
			*lo = a;
		if (a + v->size > *hi)
			*hi = a + v->size;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

static void fi_scratch_drop(struct fi_scratch *sc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sc[i].v->mem = sc[i].live;
		if (sc[i].copy)
			munmap(sc[i].copy, sc[i].len);
		free(sc[i].runs);
		sc[i].runs = NULL;
	}
}

/* Copy every executable segment; point the views at the copies. */
static int fi_scratch_make(struct fi_image *im, struct fi_scratch *sc,
			   size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < im->nviews; i++) {
		struct fi_view *v = &im->views[i];
		struct fi_scratch *s = &sc[*n];
		uint64_t start = (uint64_t)(uintptr_t)v->mem;
		void *p;

		if (!v->exec || !v->size)
			continue;
		if (*n == FI_MAX_XVIEWS) {
			fi_scratch_drop(sc, *n);
			return -E2BIG;
		}
		s->v = v;
		s->live = v->mem;
		s->runs = NULL;
		s->nruns = 0;
		s->lo = fi_page_down(start);
		s->len = fi_page_up(start + v->size) - s->lo;
		/* Populated: every page is written at once below, and one
		 * call allocating them costs far less than a fault each. */
		p = mmap(NULL, s->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED) {
			s->copy = NULL;
			fi_scratch_drop(sc, *n);
			return -errno;
		}
		s->copy = p;
		memcpy(s->copy, (void *)(uintptr_t)s->lo, s->len);
		v->mem = s->copy + (start - s->lo);
		(*n)++;
	}
	return 0;
}

/*
 * Mark the pages of @s holding a byte of link-time [a, a + n), a site
 * window (n <= 20: one page or two). @mk: the link-time range of the pages
 * marked last (sites come sorted, so most fall in it and cost one
 * compare) and the view's bounds, copied once per loop.
 */
struct fi_marked {
	uint64_t lo, lim;	/* in the pages marked last: a - lo < lim */
	uint64_t vlo, vend;	/* the view's link-time [vaddr, vaddr + size) */
	uint64_t base;		/* link-time address of the copy's first page */
};

static struct fi_marked fi_marked_init(const struct fi_scratch *s)
{
	const struct fi_view *v = s->v;

	return (struct fi_marked){
		.lo = 0, .lim = 0, .vlo = v->vaddr, .vend = v->vaddr + v->size,
		.base = v->vaddr - ((uint64_t)(uintptr_t)s->live - s->lo),
	};
}

static inline __attribute__((always_inline))
void fi_mark_pages(uint8_t *map, struct fi_marked *mk, uint64_t a, uint64_t n)
{
	const uint64_t len = n;
	uint64_t off, first, last;

	/* lo <= a && a + n <= hi, in one compare (hi - lo >= a page > n) */
	if (a - mk->lo < mk->lim)
		return;
	if (a >= mk->vend || a + n <= mk->vlo)
		return;
	if (a < mk->vlo) {
		n -= mk->vlo - a;
		a = mk->vlo;
	}
	if (n > mk->vend - a)
		n = mk->vend - a;
	off = a - mk->base;
	first = off / FI_PAGE;
	last = (off + n - 1) / FI_PAGE;
	map[first] = 1;
	map[last] = 1;
	mk->lo = mk->base + first * FI_PAGE;
	mk->lim = (last + 1 - first) * FI_PAGE - len + 1;
}

/*
 * The runs of pages of @s that the passes may write: those holding a
 * byte of a preamble window (func-16 .. func+3), a call site or a thunk
 * call. The passes read and write nothing else (patch.c: fi_read and
 * fi_pass_put are asked for site windows only).
 */
static int fi_site_runs(const struct fi_image *im, struct fi_scratch *s)
{
	size_t npages = s->len / FI_PAGE, k = 0;
	uint8_t *map = calloc(npages + 1, 1);
	const struct fi_func *funcs = im->funcs;
	const struct fi_call *calls = im->calls;
	const size_t nfuncs = im->nfuncs, ncalls = im->ncalls;
	struct fi_marked mk;

	if (!map)
		return -ENOMEM;
	mk = fi_marked_init(s);
	for (size_t i = 0; i < nfuncs; i++)
		fi_mark_pages(map, &mk, funcs[i].addr - FI_PREAMBLE_SIZE,
			      FI_PREAMBLE_SIZE + 4);
	mk = fi_marked_init(s);
	for (size_t i = 0; i < ncalls; i++)
		fi_mark_pages(map, &mk, calls[i].addr, FI_CALLSITE_SIZE);
	mk = fi_marked_init(s);
	for (size_t i = 0; i < im->ntcalls; i++)
		fi_mark_pages(map, &mk, im->tcalls[i].addr,
			      fi_seq_thunk_call.len);
	for (size_t i = 0; i < npages; i++)
		s->nruns += map[i] && (!i || !map[i - 1]);
	s->runs = malloc((2 * s->nruns + 1) * sizeof(*s->runs));
	if (!s->runs) {
		free(map);
		return -ENOMEM;
	}
	for (size_t i = 0; i < npages; i++) {
		if (!map[i])
			continue;
		if (!i || !map[i - 1]) {
			s->runs[2 * k] = (uint32_t)i;
			s->runs[2 * k + 1] = 0;
			k++;
		}
		s->runs[2 * k - 1]++;
	}
	free(map);
	return 0;
}

/* Run @r of @s (fi_site_runs): its offset from s->lo, and its length. */
static uint64_t fi_run_off(const struct fi_scratch *s, size_t r)
{
	return s->runs[2 * r] * FI_PAGE;
}

static uint64_t fi_run_len(const struct fi_scratch *s, size_t r)
{
	return s->runs[2 * r + 1] * FI_PAGE;
}

/* @s for the executable view @v: its page range and its runs of site
 * pages (fi_site_runs); nothing mapped or written yet. */
static int fi_scratch_runs(struct fi_image *im, struct fi_view *v,
			   struct fi_scratch *s)
{
	uint64_t start = (uint64_t)(uintptr_t)v->mem;

	*s = (struct fi_scratch){
		.v = v, .live = v->mem, .lo = fi_page_down(start),
		.len = fi_page_up(start + v->size) - fi_page_down(start),
	};
	return fi_site_runs(im, s);
}

/*
 * fi_scratch_make, copying only the pages that hold a site: the copy is
 * reserved whole (the views address it at the same offsets) but the pages
 * without a site are never touched, so they cost neither a copy nor a
 * page, and fi_scratch_commit moves only the runs that hold sites over
 * the text, one mremap each. Only when no other task shares the address
 * space (fi_live_patch): between two of those mremaps the text is part
 * old, part new, which no thread may see.
 */
static int fi_scratch_make_sparse(struct fi_image *im, struct fi_scratch *sc,
				  size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < im->nviews; i++) {
		struct fi_view *v = &im->views[i];
		struct fi_scratch *s = &sc[*n];
		uint64_t start = (uint64_t)(uintptr_t)v->mem;
		int err;

		if (!v->exec || !v->size)
			continue;
		if (*n == FI_MAX_XVIEWS) {
			fi_scratch_drop(sc, *n);
			return -E2BIG;
		}
		err = fi_scratch_runs(im, v, s);
		if (!err) {
			void *p = mmap(NULL, s->len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			s->copy = p == MAP_FAILED ? NULL : p;
			err = s->copy ? 0 : -errno;
		}
		if (err) {
			free(s->runs);
			fi_scratch_drop(sc, *n);
			return err;
		}
		for (size_t r = 0; r < s->nruns; r++) {
			uint64_t off = fi_run_off(s, r), len = fi_run_len(s, r);

			/* one call allocating a run's pages costs far less
			 * than a fault each; without it (before Linux 5.14)
			 * the copy faults them in */
			madvise(s->copy + off, len, MADV_POPULATE_WRITE);
			memcpy(s->copy + off, (void *)(uintptr_t)(s->lo + off), len);
		}
		v->mem = s->copy + (start - s->lo);
		(*n)++;
	}
	return 0;
}

/*
 * Verification of the sealed copies against the original text (still in
 * place, read-execute, so no thread can have changed it): the copy must
 * equal the original everywhere except at the sites, and each site must
 * hold exactly what the patcher's encoders produce from the original
 * bytes. A write into a copy while it was writable (another thread of the
 * program, during the few hundred microseconds of the patching) is found
 * here, after the copy became read-only and before it is mapped over the
 * text: the rewrite is abandoned.
 */
static int fi_scratch_verify(struct fi_image *im, const struct fi_patch_opts *o,
			     struct fi_scratch *sc, size_t n)
{
	struct fi_patch_copy cp[FI_MAX_XVIEWS];

	for (size_t i = 0; i < n; i++) {
		cp[i] = (struct fi_patch_copy){ .lo = sc[i].lo, .len = sc[i].len,
						.copy = sc[i].copy };
		sc[i].v->mem = sc[i].live;	/* read the original */
	}
	return fi_patch_verify(im, o, cp, n);
}

/* Seal every copy read-execute (no longer writable by anyone). */
static int fi_scratch_seal(struct fi_scratch *sc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (mprotect(sc[i].copy, sc[i].len, PROT_READ | PROT_EXEC))
			return -errno;
	}
	return 0;
}

/* A sparse copy: each run over its place, then the untouched rest unmapped. */
static int fi_scratch_commit_runs(struct fi_scratch *s)
{
	for (size_t r = 0; r < s->nruns; r++) {
		uint64_t off = fi_run_off(s, r), len = fi_run_len(s, r);

		if (mremap(s->copy + off, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(uintptr_t)(s->lo + off)) == MAP_FAILED)
			return -1;
	}
	/* what is left of the reservation: never touched, holes where the
	 * runs were (nothing else maps meanwhile: no other task) */
	munmap(s->copy, s->len);
	s->copy = NULL;
	free(s->runs);
	s->runs = NULL;
	s->v->mem = s->live;
	return 0;
}

/* Move each sealed, verified copy over the original text. */
static int fi_scratch_commit(struct fi_scratch *sc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *p;

		if (sc[i].runs) {
			if (fi_scratch_commit_runs(&sc[i]))
				goto fail;
			continue;
		}
		p = mremap(sc[i].copy, sc[i].len, sc[i].len,
			   MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(uintptr_t)sc[i].lo);
		if (p == MAP_FAILED)
			goto fail;
		sc[i].copy = NULL;
		sc[i].v->mem = sc[i].live;
	}
	return 0;
fail:
	/* Segments already swapped stay swapped (they are complete); the
	 * rest keep their original text. */
	{
		int err = -errno;

		fi_scratch_drop(sc, n);
		return err;
	}
}

int fi_live_copy_make(struct fi_image *im, struct fi_live_copy *lc)
{
	return fi_scratch_make(im, lc->sc, &lc->n);
}

int fi_live_copy_seal_verify(struct fi_image *im,
			     const struct fi_patch_opts *o,
			     struct fi_live_copy *lc)
{
	int err = fi_scratch_seal(lc->sc, lc->n);

	return err ? err : fi_scratch_verify(im, o, lc->sc, lc->n);
}

void fi_live_copy_drop(struct fi_live_copy *lc)
{
	fi_scratch_drop(lc->sc, lc->n);
	lc->n = 0;
}

bool fi_live_unverified_ok(void)
{
	const struct fi_runtime *rt = fi_rt();

	return rt->wr.inplace || (!rt->sealed && fi_live_before_main());
}

/*
 * Weak here: a program that links libfineibt.a for its offline parts
 * only (the fineibt CLI) reaches this file but never starts a runtime;
 * a strong reference would pull the variant's object in, and with it
 * the runtime's constructors (a first window, system calls a service's
 * filter refuses). Both runtimes define it; absent, nothing started.
 */
#pragma weak fi_variant

bool fi_live_before_main(void)
{
	return fi_rt()->wr.unrun || (&fi_variant && fi_variant.in_executable);
}

bool fi_live_alone(void)
{
	/*
	 * unshare(CLONE_VM) changes nothing; the kernel refuses it (EINVAL)
	 * when another task shares the address space: a thread, an io_uring
	 * worker, a clone(CLONE_VM) or vfork child. Any other error (seccomp,
	 * an old kernel) counts as "not alone". Made directly: no errno to
	 * set (the early start may run before TLS is usable), no interposer
	 * (src/seq/rawsys.h).
	 */
	return fi_sys3(SYS_unshare, CLONE_VM, 0, 0) == 0;
}

/* ------------------------------------------------------------ in place */

/*
 * The runtime's own module, as loaded: its ELF header and dynamic section
 * (hidden, link-time symbols; weak: a fully static executable has none).
 */
extern const ElfW(Ehdr) __ehdr_start __attribute__((weak, visibility("hidden")));
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak, visibility("hidden")));

/* Does a slot of @rel (@size bytes) of the runtime's relocations, a
 * function or object of another module as bound for the runtime, point
 * into [lo, hi)? */
static bool fi_slots_into(uintptr_t bias, uintptr_t rel, size_t size,
			  size_t skip, uint64_t lo, uint64_t hi)
{
	const ElfW(Rela) *r = (const ElfW(Rela) *)(rel >= bias ? rel : rel + bias);

	for (size_t i = skip; i < size / sizeof(*r); i++) {
		uint32_t t = ELF64_R_TYPE(r[i].r_info);
		uint64_t v;

		if (t != R_X86_64_JUMP_SLOT && t != R_X86_64_GLOB_DAT &&
		    t != R_X86_64_64)
			continue;
		v = *(const uint64_t *)(bias + r[i].r_offset);
		if (v >= lo && v < hi)
			return true;
	}
	return false;
}

/*
 * Does the runtime call into [lo, hi)? Its own code lies there, or a
 * slot of its GOT (what it calls in libc, or in whatever interposes on
 * libc: malloc, memcpy, open...) points there. True when the runtime's
 * dynamic section cannot be found (a fully static executable).
 */
static bool fi_runtime_calls_into(uint64_t lo, uint64_t hi)
{
	uintptr_t self = (uintptr_t)fi_live_patch, bias = 0, rela = 0, jmprel = 0;
	size_t relasz = 0, pltsz = 0, relative = 0;
	const ElfW(Phdr) *ph;
	bool dyn = false;

	if (self >= lo && self < hi)
		return true;
	if (!&__ehdr_start || !_DYNAMIC)
		return true;
	ph = (const ElfW(Phdr) *)((uintptr_t)&__ehdr_start + __ehdr_start.e_phoff);
	for (size_t i = 0; i < __ehdr_start.e_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC) {
			bias = (uintptr_t)_DYNAMIC - ph[i].p_vaddr;
			dyn = true;
		}
	}
	if (!dyn)
		return true;
	/* the loader may have biased these d_ptr in place (glibc does) */
	for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_RELA)
			rela = d->d_un.d_ptr;
		else if (d->d_tag == DT_RELASZ)
			relasz = d->d_un.d_val;
		else if (d->d_tag == DT_JMPREL)
			jmprel = d->d_un.d_ptr;
		else if (d->d_tag == DT_PLTRELSZ)
			pltsz = d->d_un.d_val;
		else if (d->d_tag == DT_RELACOUNT)
			relative = d->d_un.d_val;
	}
	/*
	 * The DT_RELACOUNT R_X86_64_RELATIVE relocations come first (the
	 * linker sorts them there to say so): the runtime's own addresses,
	 * half of its ~200, skipped unread. ld.so trusted the same count
	 * when it relocated the runtime (elf_dynamic_do_Rela).
	 */
	return (rela && fi_slots_into(bias, rela, relasz, relative, lo, hi)) ||
	       (jmprel && fi_slots_into(bias, jmprel, pltsz, 0, lo, hi));
}

/*
 * May @im's text be written in place, each run of site pages made
 * read-write (not executable) while the passes write it? Only if nothing
 * that runs meanwhile lies in it. Signals are blocked and no other task
 * exists (fi_live_patch); what runs is this thread: the runtime (the
 * passes, the reports of skipped sites) and what it calls in other
 * modules through its GOT (libc, or a program's interposer of a libc
 * function). A module holding any of those keeps the copy: with
 * -static-fineibt the executable holds the runtime (and with a static
 * libc, libc too); an instrumented module defining malloc holds what the
 * runtime calls. The mprotect and madvise calls are made directly
 * (rawsys.h): no wrapper runs either. Not covered: an interposer in
 * another module that itself calls into @im.
 */
static bool fi_inplace_safe(const struct fi_image *im)
{
	uint64_t lo, hi;

	fi_live_text_range(im, &lo, &hi);
	return lo < hi && !fi_runtime_calls_into(lo, hi);
}

/* The span of @s's runs: from the first run's start (its address) to the
 * last one's end. */
static uint64_t fi_span_lo(const struct fi_scratch *s)
{
	return s->lo + fi_run_off(s, 0);
}

static uint64_t fi_span_len(const struct fi_scratch *s)
{
	return s->nruns ? fi_run_off(s, s->nruns - 1) +
				  fi_run_len(s, s->nruns - 1) - fi_run_off(s, 0)
			: 0;
}

/*
 * @s's span made @prot in one call: pages between runs change protection
 * too but are neither copied nor written, and one call instead of one a
 * run keeps the segment's mapping from being split and merged again at
 * each run (sqlite3's speedtest1: 29 runs, 2 calls instead of 58). No
 * code of the module runs meanwhile (fi_inplace_safe, signals blocked,
 * no other task).
 */
static long fi_inplace_prot(const struct fi_scratch *s, int prot)
{
	if (!s->nruns)
		return 0;
	return fi_sys3(SYS_mprotect, (long)fi_span_lo(s), (long)fi_span_len(s),
		       prot);
}

/* The spans of @sc[0..@n) made read-execute again; nothing runs on them
 * until then. */
static void fi_inplace_close(struct fi_scratch *sc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* Left read-write, the text could not run: the process
		 * cannot go on (W^X holds either way). */
		if (fi_inplace_prot(&sc[i], PROT_READ | PROT_EXEC))
			fi_rt_die("cannot make rewritten text executable again");
	}
}

/*
 * 128 KiB of text a read with the stack's buffer (sqlite's 240 pages: 8
 * reads). That buffer is small and the function is not inlined: it runs
 * in a dlopen on whatever stack the caller's thread has (a thread with a
 * 16 KiB stack dlopens: protect_stack, cache.sh; with 1 KiB here, the
 * cache's lookup read past the end of such a stack, the kernel answered
 * EFAULT and the module counted as "not clean"). A caller with a larger
 * buffer whose pages are mapped already passes it as @buf (@cap entries):
 * one read for a text of up to @cap pages.
 */
__attribute__((noinline)) bool fi_live_pages_clean_in(int pm, uint64_t a,
						      uint64_t len,
						      uint64_t *buf,
						      size_t cap)
{
	uint64_t own[32], first = a / FI_PAGE, *e = buf;
	size_t n = len / FI_PAGE;

	if (pm < 0)
		return false;
	if (!e || cap < 32) {
		e = own;
		cap = 32;
	}
	for (size_t i = 0; i < n; i += cap) {
		size_t k = n - i < cap ? n - i : cap;

		if (fi_sys6(SYS_pread64, pm, (long)e, (long)(k * 8),
			    (long)((first + i) * 8), 0, 0) != (long)(k * 8))
			return false;
		for (size_t j = 0; j < k; j++) {
			/* present or swapped, and not a file page */
			if ((e[j] >> 62) && !((e[j] >> 61) & 1))
				return false;
		}
	}
	return true;
}

bool fi_live_pages_clean(int pm, uint64_t a, uint64_t len)
{
	return fi_live_pages_clean_in(pm, a, len, NULL, 0);
}

/* The mapped pages of @len bytes at @a dropped if they are the file's own
 * (fi_live_pages_clean); true if they were. */
static bool fi_inplace_drop(int pm, uint64_t a, uint64_t len)
{
	if (!fi_live_pages_clean(pm, a, len))
		return false;
	fi_sys3(SYS_madvise, (long)a, (long)len, MADV_DONTNEED);
	return true;
}

/*
 * Open the runs of site pages of @im read-write (one span a segment,
 * fi_inplace_prot), their private copies made at once
 * (MADV_POPULATE_WRITE breaks copy-on-write of a whole run in one call;
 * an error only means the writes fault them in). Returns false, every
 * span closed again and nothing written, if one cannot be.
 */
/* /proc/self/pagemap, opened at its first use (*@pm == -2 until then). */
static int fi_pagemap(int *pm)
{
	if (*pm == -2)
		*pm = (int)fi_sys_open("/proc/self/pagemap",
				   O_RDONLY | O_CLOEXEC, 0);
	return *pm;
}

static bool fi_inplace_open(struct fi_image *im, struct fi_scratch *sc,
			    size_t *n, int *pm)
{
	*n = 0;
	for (size_t i = 0; i < im->nviews; i++) {
		struct fi_view *v = &im->views[i];
		struct fi_scratch *s = &sc[*n];
		bool span;

		if (!v->exec || !v->size)
			continue;
		if (*n == FI_MAX_XVIEWS) {
			fi_inplace_close(sc, *n);
			goto drop;
		}
		(*n)++;
		if (fi_scratch_runs(im, v, s) ||
		    fi_inplace_prot(s, PROT_READ | PROT_WRITE)) {
			fi_inplace_close(sc, *n - 1);
			goto drop;
		}
		/*
		 * A page already mapped read-only would be copied on its
		 * write fault, with a TLB flush each (~17 us a page in a
		 * VM); unmapped, in one flush. Only the file's own pages: a
		 * private one would be lost. The whole span at once when it
		 * is all the file's (its pages between runs are only mapped
		 * again, from the page cache, when they next run), else run
		 * by run. A span of one page is left to its write fault: the
		 * check and the two calls cost more than the flush they save
		 * (hello: 5 system calls; bench/plt_page.c).
		 */
		if (fi_span_len(s) <= FI_PAGE)
			continue;
		span = fi_inplace_drop(fi_pagemap(pm), fi_span_lo(s),
				       fi_span_len(s));
		for (size_t r = 0; r < s->nruns; r++) {
			uint64_t a = s->lo + fi_run_off(s, r);

			if (!span)
				fi_inplace_drop(*pm, a, fi_run_len(s, r));
			fi_sys3(SYS_madvise, (long)a, (long)fi_run_len(s, r),
				MADV_POPULATE_WRITE);
		}
	}
	return true;
drop:
	for (size_t i = 0; i < *n; i++)
		free(sc[i].runs);
	return false;
}

/*
 * fi_live_patch alone, when fi_inplace_safe: the site runs are written
 * where they are, between two mprotects; no copy, no mremap. *@done
 * false: a run could not be opened, nothing was written (take the copy
 * instead). fi_patch_image refuses an image before writing a byte
 * (-EALREADY, -EINVAL); an error after a write would leave the module
 * half rewritten, which no caller could undo: the process stops.
 */
static int fi_live_patch_inplace(struct fi_image *im,
				 const struct fi_patch_opts *o,
				 struct fi_patch_stats *st, bool *done)
{
	struct fi_scratch sc[FI_MAX_XVIEWS];
	size_t n, writes = im->writes;
	int err, pm = -2;

	*done = fi_inplace_open(im, sc, &n, &pm);
	if (pm >= 0)
		fi_sys3(SYS_close, pm, 0, 0);
	if (!*done)
		return 0;
	err = fi_patch_image(im, o, st);
	fi_inplace_close(sc, n);
	for (size_t i = 0; i < n; i++)
		free(sc[i].runs);
	if (err && im->writes != writes)
		fi_rt_die("a module's text was rewritten in part");
	return err;
}

/*
 * May this process not make written memory executable? The kernel's
 * PR_SET_MDWE says so (PR_GET_MDWE); a seccomp filter that refuses every
 * mprotect asking for PROT_EXEC (systemd's MemoryDenyWriteExecute= where
 * the kernel has no MDWE, or systemd before 253) says so by refusing one
 * that changes nothing: this function's own page, read-execute already.
 * Two prctl calls a module rewritten (neither flag can be cleared once
 * set, so a yes is kept; a no is asked again: the program may set them).
 */
#define FI_PR_GET_MDWE	66
static bool fi_live_noexec(void)
{
	static bool yes;
	uintptr_t page = (uintptr_t)fi_live_noexec & ~(uintptr_t)(FI_PAGE - 1);
	long r;

	if (__atomic_load_n(&yes, __ATOMIC_RELAXED))
		return true;
	r = fi_sys6(SYS_prctl, FI_PR_GET_MDWE, 0, 0, 0, 0, 0);
	if (!(r > 0 && (r & 1)) &&
	    (fi_sys6(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0, 0) != SECCOMP_MODE_FILTER ||
	     !fi_sys3(SYS_mprotect, (long)page, FI_PAGE, PROT_READ | PROT_EXEC)))
		return false;
	__atomic_store_n(&yes, true, __ATOMIC_RELAXED);
	return true;
}

/*
 * Under fi_live_noexec: the passes write a copy (never executable), then
 * the copy goes over the text through /proc/self/mem (@mem): no page of
 * the process is made writable or executable by it. Alone, the sparse
 * copy's runs; with other tasks, the whole segments, copied, made
 * read-only and verified first (fi_scratch_verify: no other thread
 * changed them), and written while nothing runs them (a module is
 * rewritten while it loads, before its constructors and before dlopen
 * returns it). A failed write after the first leaves the module in part
 * rewritten: the process stops, as in place.
 */
static int fi_live_patch_mem(struct fi_image *im, const struct fi_patch_opts *o,
			     struct fi_patch_stats *st, int mem, bool alone)
{
	struct fi_scratch sc[FI_MAX_XVIEWS];
	size_t n;
	bool wrote = false;
	int err = alone ? fi_scratch_make_sparse(im, sc, &n) :
			  fi_scratch_make(im, sc, &n);

	if (err)
		return err;
	err = fi_patch_image(im, o, st);
	for (size_t i = 0; i < n && !err && !alone; i++) {
		if (mprotect(sc[i].copy, sc[i].len, PROT_READ))
			err = -errno;
	}
	if (!err && !alone)
		err = fi_scratch_verify(im, o, sc, n);
	for (size_t i = 0; i < n && !err; i++) {
		size_t runs = sc[i].runs ? sc[i].nruns : 1;

		for (size_t r = 0; r < runs && !err; r++) {
			uint64_t off = sc[i].runs ? fi_run_off(&sc[i], r) : 0;
			uint64_t len = sc[i].runs ? fi_run_len(&sc[i], r) :
						    sc[i].len;

			err = (int)fi_rt_pwrite(mem, sc[i].copy + off, len,
						(void *)(uintptr_t)(sc[i].lo + off));
			wrote |= !err;
		}
	}
	if (err && wrote)
		fi_rt_die("a module's text was rewritten in part");
	fi_scratch_drop(sc, n);
	return err;
}

/*
 * The copy is verified only when someone else could have written it. With
 * every signal blocked, no code of the program runs in this thread until
 * the copy is sealed; when no other task shares the address space either
 * and start-up is not over (no write primitive of the program has had a
 * chance to aim an io_uring read at the text, see below), the
 * runtime's own writes are the only ones the copy can have seen, and a
 * new task could only come from this thread (the runtime starts none). A
 * process that can write another's memory from outside (ptrace rights:
 * process_vm_writev, /proc/PID/mem) can write the text after the swap as
 * well; no verification stops it. In every other case (threads, at a
 * dlopen of a multi-threaded program) the sealed copy is verified.
 *
 * Alone, there is no copy at all (fi_live_patch_inplace) unless the module
 * holds code this thread runs meanwhile (fi_inplace_safe); then the copy
 * is sparse (fi_scratch_make_sparse): its runs of site pages are swapped
 * in one by one. Either only a process with no other task may do.
 * Otherwise each segment is copied and swapped whole.
 */
int fi_live_patch(struct fi_image *im, const struct fi_patch_opts *o,
		  struct fi_patch_stats *st)
{
	struct fi_live_copy lc;
	sigset_t all, old;
	bool blocked, alone, done;
	int err;

	sigfillset(&all);
	blocked = !pthread_sigmask(SIG_SETMASK, &all, &old);
	/*
	 * Alone is not enough: an io_uring read the program queued
	 * completes in this very thread, at its next return to user mode,
	 * into the address a provided-buffer ring names (plain user memory,
	 * read by the kernel at completion time); signals blocked or not.
	 * Found by attack (tests/e2e/protect_uring.sh): one forged ring
	 * entry put a payload into a library's text while it was rewritten
	 * in place at a dlopen, unverified. Only start-up may skip the
	 * verification, where it is proven (fi_live_unverified_ok: written
	 * in place, wr.inplace, no code of the program has run at all; or
	 * the static runtime's start-up, before main); every other rewrite
	 * is checked, a libfineibt.so started by the program's dlopen's
	 * included.
	 */
	alone = blocked && fi_live_unverified_ok() && fi_live_alone();
	if (fi_live_noexec()) {
		int mem = fi_rt_mem_fd();

		if (mem >= 0) {
			err = fi_live_patch_mem(im, o, st, mem, alone);
			if (blocked)
				pthread_sigmask(SIG_SETMASK, &old, NULL);
			return err;
		}
	}
	if (alone && fi_inplace_safe(im)) {
		err = fi_live_patch_inplace(im, o, st, &done);
		if (done) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			return err;
		}
	}
	err = alone ? fi_scratch_make_sparse(im, lc.sc, &lc.n) :
		      fi_live_copy_make(im, &lc);
	if (err)
		goto out;
	err = fi_patch_image(im, o, st);
	if (!err)
		err = alone ? fi_scratch_seal(lc.sc, lc.n) :
			      fi_live_copy_seal_verify(im, o, &lc);
	if (err)
		fi_live_copy_drop(&lc);
out:
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	return fi_scratch_commit(lc.sc, lc.n);
}

/* ------------------------------------------------------------ BHI stubs */

bool fi_live_in_reach(uint64_t t, uint64_t size, uint64_t lo, uint64_t hi)
{
	if (!t || lo >= hi)
		return false;
	if (t + size > lo && t + size - lo >= FI_REACH)
		return false;
	if (hi > t && hi - t >= FI_REACH)
		return false;
	return true;
}

static bool fi_zero_tail(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		if (p[i])
			return false;
	}
	return true;
}

/* Map a copy of the stubs at @hint exactly, or fail. */
static uint64_t fi_stub_map_at(uint64_t hint, const uint8_t *src,
			       size_t size)
{
	void *p = mmap((void *)(uintptr_t)hint, fi_page_up(size),
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED)
		return 0;
	if ((uint64_t)(uintptr_t)p != hint) {
		/* A kernel older than 4.17 took the flag as a mere hint. */
		munmap(p, fi_page_up(size));
		return 0;
	}
	memcpy(p, src, size);
	/* Sealed, then checked: nothing written meanwhile becomes code. */
	if (mprotect(p, fi_page_up(size), PROT_READ | PROT_EXEC) ||
	    memcmp(p, src, size) || !fi_zero_tail(p, size, fi_page_up(size))) {
		munmap(p, fi_page_up(size));
		return 0;
	}
	return hint;
}

/* Try page-aligned spots above and below the text, nearest first. */
uint64_t fi_live_map_near(uint64_t lo, uint64_t hi, const uint8_t *src,
			  size_t size)
{
	static const uint64_t step = 1ULL << 21;

	for (uint64_t k = 0; k < 256; k++) {
		uint64_t up = fi_page_up(hi) + k * step;
		uint64_t down = fi_page_down(lo) - (k + 1) * step;
		uint64_t got;

		if (fi_live_in_reach(up, size, lo, hi)) {
			got = fi_stub_map_at(up, src, size);
			if (got)
				return got;
		}
		if (down < lo && fi_live_in_reach(down, size, lo, hi)) {
			got = fi_stub_map_at(down, src, size);
			if (got)
				return got;
		}
	}
	return 0;
}

int fi_live_stubs_for(const struct fi_image *im, uint64_t *out)
{
	size_t size;
	const uint8_t *own = fi_bhi_stubs(&size);
	uint64_t lo, hi, got;
	int err;

	fi_live_text_range(im, &lo, &hi);
	*out = 0;
	/* The module's own stubs (linked in), else ours, else a copy. */
	if (im->bhi_args &&
	    fi_live_in_reach(im->bhi_args + im->bias, size, lo, hi)) {
		*out = im->bhi_args + im->bias;
		err = fi_rt_add_stubs(*out, size);
		return err == -EEXIST ? 0 : err;
	}
	if (fi_live_in_reach((uint64_t)(uintptr_t)own, size, lo, hi)) {
		*out = (uint64_t)(uintptr_t)own;
		return 0;
	}
	/* The copies we mapped, shared by every module within their reach;
	 * their list is in the read-only runtime state (docs/protection.md). */
	for (size_t i = 0; i < fi_rt()->nstub_copies; i++) {
		if (fi_live_in_reach(fi_rt()->stub_copies[i], size, lo, hi)) {
			*out = fi_rt()->stub_copies[i];
			return 0;
		}
	}
	if (fi_rt()->nstub_copies == FI_MAX_MODULES)
		return -ENOSPC;
	/* A copy's page would have to become executable: every spot tried
	 * would be mapped, refused and unmapped (three calls each). */
	if (fi_live_noexec())
		return -EACCES;
	got = fi_live_map_near(lo, hi, own, size);
	if (!got)
		return -ENOMEM;
	err = fi_rt_add_stub_copy(got, size);
	if (err) {
		munmap((void *)(uintptr_t)got, fi_page_up(size));
		return err;
	}
	*out = got;
	return 0;
}

/*
 * The runtime object's own RELRO (libfineibt.so, or the executable that
 * holds libfineibt.a), from its ELF header in memory (link-time symbols:
 * no word of the loader's): its GOT, through which it calls libc, and
 * fi_rt_coarse_slot. False when it cannot be found.
 */
static bool fi_runtime_relro(uint64_t *lo, uint64_t *hi)
{
	const ElfW(Phdr) *ph;
	uintptr_t bias = 0;
	bool dyn = false;

	*lo = *hi = 0;
	if (!&__ehdr_start || !_DYNAMIC)
		return false;
	ph = (const ElfW(Phdr) *)((uintptr_t)&__ehdr_start + __ehdr_start.e_phoff);
	for (size_t i = 0; i < __ehdr_start.e_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC) {
			bias = (uintptr_t)_DYNAMIC - ph[i].p_vaddr;
			dyn = true;
		}
	}
	for (size_t i = 0; dyn && i < __ehdr_start.e_phnum; i++) {
		if (ph[i].p_type == PT_GNU_RELRO) {
			*lo = fi_page_down(bias + ph[i].p_vaddr);
			*hi = fi_page_up(bias + ph[i].p_vaddr + ph[i].p_memsz);
		}
	}
	return dyn;
}

/*
 * May the kernel write @a, a slot the caller found in a RELRO range?
 * That range, and the slot, come from the loader's link map (l_addr,
 * l_phdr, l_ld: ld.so's writable data), so a forged link map made the
 * runtime write its own read-only state through /proc/self/mem, which
 * ignores page protection (tests/e2e/protect_slot.sh). The kernel decides
 * instead: an aligned word of a read-only mapping of a file, neither
 * writable nor executable (so not the state block, the arena, a stub or
 * veneer page, any text: anonymous or executable), outside the runtime's
 * own RELRO (its GOT, fi_rt_coarse_slot) and outside the registered
 * arrays a cache hit maps from its entry (read-only file pages too),
 * and no page of the runtime's own file (its read-only data: the
 * sequences' templates, the tables the handler reads).
 * Called inside the window: the kernel's answer and the store are made
 * with every signal blocked, and no mapping of the runtime's changes
 * between them.
 */
static bool fi_live_slot_ok(uintptr_t a)
{
	const struct fi_runtime *rt = fi_rt();
	size_t n = __atomic_load_n(&rt->nmods, __ATOMIC_ACQUIRE);
	uint64_t lo, hi;
	struct fi_vma v, own;

	if ((a & 7) || !fi_runtime_relro(&lo, &hi) || (a >= lo && a < hi))
		return false;
	if (fi_rt_vma(a, &v) || !v.r || v.w || v.x || !v.file ||
	    a + sizeof(void *) > v.hi)
		return false;
	if (fi_rt_vma((uint64_t)(uintptr_t)&fi_live_slot_ok, &own) ||
	    (own.dev == v.dev && own.ino == v.ino))
		return false;
	for (size_t i = 0; i < n && i < FI_MAX_SLOTS; i++) {
		const struct fi_module *m = rt->mods[i];
		uintptr_t r = m ? (uintptr_t)m->regs : 0;

		if (r && a >= fi_page_down(r) && a < fi_page_up(r + m->regs_len))
			return false;
	}
	return true;
}

int fi_live_store_slot(uintptr_t relro_lo, uintptr_t relro_hi, void **slot,
		       void *to)
{
	const struct fi_livedyn win = { .relro_lo = relro_lo, .relro_hi = relro_hi };
	uintptr_t a = (uintptr_t)slot;
	sigset_t saved;
	long err;
	int fd;

	if (a < relro_lo || a >= relro_hi) {
		/* A writable slot: no page to open, nothing to race. */
		__atomic_store_n(slot, to, __ATOMIC_RELEASE);
		return 0;
	}
	if (!fi_rt_write_begin(&saved))
		return -errno;
	if (!fi_live_slot_ok(a)) {
		fi_rt_write_end(&saved);
		return -EPERM;
	}
	/* The window checked the descriptor (ours, still our file). */
	fd = fi_rt()->wr.how == FI_RT_KERNEL ? fi_rt_mem_fd() : -1;
	err = fd >= 0 ? fi_rt_pwrite(fd, &to, sizeof(to), slot) : -ENOSYS;
	fi_rt_write_end(&saved);
	if (err == -ENOSYS && fi_rt()->wr.how == FI_RT_WINDOWS) {
		fi_livedyn_store(&win, slot, to);
		return 0;
	}
	return (int)err;
}
