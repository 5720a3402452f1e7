/* SPDX-License-Identifier: MIT */
/* Rewriting loaded modules under W^X, and BHI stubs within reach (rtlive.c). */
#ifndef FI_RTLIVE_H
#define FI_RTLIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "livedyn.h"
#include "patch.h"

/* One executable segment's scratch copy (rtlive.c). */
#define FI_MAX_XVIEWS	16
struct fi_scratch {
	struct fi_view *v;
	uint8_t *live;		/* v->mem before we pointed it at the copy */
	uint64_t lo, len;	/* run-time page range of the segment */
	uint8_t *copy;
	/*
	 * Sparse copy (fi_live_patch, alone): only these runs of pages,
	 * [first, first + count) pairs in pages from @lo, hold a site and
	 * were copied; the rest of @copy is never touched, and only the runs
	 * are moved over the text. NULL: the whole segment.
	 */
	uint32_t *runs;
	size_t nruns;
};

struct fi_live_copy {
	struct fi_scratch sc[FI_MAX_XVIEWS];
	size_t n;
};

/*
 * The steps of fi_live_patch, for tests/unit/test_live_verify.c (which
 * writes into a copy before it is sealed, as a racing thread would):
 * copy @im's executable segments and point its views at the copies;
 * seal them read-execute and verify them against the original text
 * (-EBADMSG: a byte differs from what the passes of @o produce from the
 * original); drop them (views back on the original, copies unmapped).
 */
int fi_live_copy_make(struct fi_image *im, struct fi_live_copy *lc);
int fi_live_copy_seal_verify(struct fi_image *im,
			     const struct fi_patch_opts *o,
			     struct fi_live_copy *lc);
void fi_live_copy_drop(struct fi_live_copy *lc);

/*
 * No other task (thread, io_uring worker, CLONE_VM child) shares this
 * address space right now. fi_live_patch skips verifying the sealed copy
 * then (it blocks signals first, so nothing of the program runs).
 */
bool fi_live_alone(void);

/*
 * May the runtime's own writes to text go unverified when the process is
 * alone? Only where it is proven that no write primitive of the program
 * can exist yet: a start written in place (wr.inplace), or a start-up
 * (the state not sealed yet) that fi_live_before_main proves. Not a
 * libfineibt.so the program's own dlopen started (after main, not sealed
 * yet: "not sealed" proves nothing there), nor any rewrite after
 * start-up: an io_uring read the program queued, with its buffer address
 * taken from a ring in plain user memory, can complete into the pages
 * being written or into the list of what to write, at the next return
 * to user mode of this very thread (a system call, a fault, an
 * interrupt): alone or not, signals blocked or not
 * (tests/e2e/protect_uring.sh). rtlive.c's rewrites and plt.c's direct
 * entries then take the sealed, verified copy.
 */
bool fi_live_unverified_ok(void);

/*
 * Is this runtime's start-up proven to come before any code of the
 * program that could hold a write primitive? libfineibt.so: only by the
 * start path's proof that no code of the program had run as its first
 * window opened (wr.unrun, kept read-only from fi_rt_first_unrun:
 * src/load/early.c), whether or not that window could be written in
 * place; a dlopen after main never has it, and "not sealed yet" does
 * not tell that start from the initial load's. The static runtime
 * (fi_variant.in_executable): by what it is, its start being the
 * executable's preinit entry, before main.
 */
bool fi_live_before_main(void);

/*
 * Store @to in pointer slot @slot of a loaded module whose RELRO is
 * [@relro_lo, @relro_hi) (the binding passes: dlsym_so.c's interposers,
 * sigbind.c's RTLD_DEEPBIND rebinding, stockven.c's typed veneers). A
 * slot in RELRO is written through the kernel (pwrite on /proc/self/mem
 * inside a state window, as fi_rt_put writes the state): its page is never
 * writable in the process, so a thread racing the store cannot write the
 * module's GOT (its PLT jumps are checked in no mode). Only where the
 * state itself is written through windows (docs/protection.md) is the page
 * opened for the store. The range and the slot come from the loader's
 * writable link map: the kernel decides whether the slot may be written
 * at all (an aligned word of a read-only, non-executable file mapping,
 * no page of the runtime's own file, nor a cache entry's registered
 * arrays),
 * else -EPERM. 0 or -errno (nothing stored).
 */
int fi_live_store_slot(uintptr_t relro_lo, uintptr_t relro_hi, void **slot,
		       void *to);

/*
 * Run the passes of @o over live module @im (attached with
 * fi_image_attach_live) on a scratch copy of its text, then swap the copy
 * in with mremap; with no other task in the process, on its site pages in
 * place (read-write, not executable, meanwhile). On error the text is
 * unchanged. Returns 0 or -errno.
 */
int fi_live_patch(struct fi_image *im, const struct fi_patch_opts *o,
		  struct fi_patch_stats *st);

/*
 * Are the pages of @len bytes at @a, if mapped, the file's own (not a
 * private copy: a TEXTREL, a PLT page plt.c swapped, a debugger's
 * breakpoint)? /proc/self/pagemap, @pm; false when it cannot be read.
 */
bool fi_live_pages_clean(int pm, uint64_t a, uint64_t len);
/* The same, read into @buf (@cap entries, its pages mapped: NULL for the
 * stack's 32) in as few reads as it holds. */
bool fi_live_pages_clean_in(int pm, uint64_t a, uint64_t len, uint64_t *buf,
			    size_t cap);

/* Run-time [lo, hi) covering the executable views of live @im. */
void fi_live_text_range(const struct fi_image *im, uint64_t *lo,
			uint64_t *hi);

/* Can a rel32 anywhere in [lo, hi) reach all of [t, t + size)? */
bool fi_live_in_reach(uint64_t t, uint64_t size, uint64_t lo, uint64_t hi);

/*
 * A BHI stub array within rel32 reach of live @im's text: the module's
 * own, libfineibt's, or a copy mapped near the module and registered with
 * fi_rt_add_stubs(). -EACCES when a copy is needed and the process may
 * not make memory executable (MemoryDenyWriteExecute=, PR_SET_MDWE):
 * nothing is tried then. Not thread-safe: call under the runtime's lock.
 */
int fi_live_stubs_for(const struct fi_image *im, uint64_t *out);

/*
 * Map a read-execute copy of @src (@size bytes, page-rounded) within rel32
 * reach of [lo, hi): its address, or 0. Signal-safe (mmap and copies).
 */
uint64_t fi_live_map_near(uint64_t lo, uint64_t hi, const uint8_t *src,
			  size_t size);

#endif
