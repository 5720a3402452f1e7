/* SPDX-License-Identifier: MIT */
#ifndef FI_UPCALL_H
#define FI_UPCALL_H

/*
 * The calls that go up by name (docs/architecture.md, "Calls that go
 * up"): functions of src/interpose/ that the layers below call directly,
 * declared here, below every caller, defined above (like print.h). Each
 * is a plain function both runtime variants have; what a variant may
 * lack goes through its table instead (variant.h). tests/e2e/layers.sh
 * lists every caller and the names it calls (DIRECT_UPCALLS) and fails
 * on any other call up, and on a name here it does not list.
 *
 * dlsym veneers and the sites the SIGILL handler opens for them
 * (src/interpose/foreign.c, docs/compat.md): called by the handler
 * (src/trap/trap.c), the coarse check's stops (src/trap/coarsetrap.c) and
 * the stock modules' typed veneers (src/trap/stockven.c).
 */
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fi_trap;		/* src/trap/trapinfo.h */

/* Is @addr code of a loaded object that is no kCFI module (the runtime active)? */
bool fi_foreign_is_code(uint64_t addr);
/* The function a published dlsym veneer slot holding @addr jumps to (its
 * entry in @entry), or 0. Signal-safe. */
uint64_t fi_foreign_slot_target(uint64_t addr, uint64_t *entry);

/*
 * For reports: the function dlsym was asked for whose (real) address is
 * nearest at or below @addr, above @after and within 64 KiB: its address
 * in @start and the name asked for in @name. Signal-safe.
 */
bool fi_foreign_name_near(uint64_t addr, uint64_t after, uint64_t *start,
			  const char **name);

/*
 * From the SIGILL handler: @t (decoded, kcfi or paranoid) was a checking
 * caller meeting a veneer. Opens the site (per-site stub, see foreign.c)
 * unless another thread is doing so, and returns true: the caller lets
 * the call go on at t->resume, unreported; @opened says whether this
 * call opened the site. False: not such a trap.
 */
bool fi_foreign_take(const struct fi_trap *t, bool *opened);

/*
 * @bytes (at least 5, read from the call site at run-time @ip) jump to a
 * per-site stub: the stub, whose first instruction is the site's original
 * movl; else NULL. Pass a copy taken once, not the live site: another
 * thread may open the site between two reads of it (trap.c).
 */
const uint8_t *fi_foreign_site_head(const uint8_t *bytes, uint64_t ip);

/*
 * The PLT's direct entries (src/interpose/plt.c), asked for by the module
 * walk (src/load/start.c, fi_rt_plt_pass).
 */
struct fi_plt_result {
	size_t slots;	/* PLT slots outside PT_GNU_RELRO (writable) */
	size_t direct;	/* of those, whose entry no longer reads the slot */
	size_t made;	/* made direct by this call */
	bool unknown;	/* writable slots, but no PLT layout recognised */
	bool busy;	/* lazy binding, and other threads: none touched */
	bool textrel;	/* text relocations: never touched */
	bool inplace;	/* made in place (alone), not by a moved copy */
	int err;	/* the rewrite failed (-errno): the text is unchanged */
};

/*
 * What one pass over the loaded modules shares (start.c), so that each
 * module does not ask again: set @held once every signal is blocked by
 * the caller (for the whole pass), with @alone = fi_live_alone() asked
 * then (no other task shares the address space; none can appear while
 * this thread runs only the runtime). @buf (@cap bytes, 0: none) is
 * scratch memory for a module's list of fixes, given back unread by the
 * caller (it holds code addresses).
 */
struct fi_plt_pass {
	bool held, alone;
	/* The constructor's pass: start-up's, or a dlopen's that loaded
	 * libfineibt.so (main reached): only fi_live_before_main tells. */
	bool startup;
	int mem;	/* alone: fi_rt_mem_fd(), asked once a pass; else -1 */
	void *buf;
	size_t cap;
};

/*
 * Make every PLT entry of module @info whose GOT slot is writable and
 * already bound jump to the slot's value directly (W^X at every instant).
 * With other tasks about (or @p NULL or not @held): through a read-only
 * copy of the entry's pages, verified, then moved over them. Alone, with
 * signals blocked (@p->held, @p->alone): in place, each fix checked
 * against the text first, then written through @p->mem (/proc/self/mem:
 * the text never writable), or, without it, the pages made read-write
 * (not executable) for the writes and read-execute again, nothing but
 * those stores running in between; in place only in a start-up proven
 * to precede main (fi_live_unverified_ok, or @p->startup in a runtime
 * that fi_live_before_main says always starts there: rtlive.h; anywhere
 * else an io_uring completion can write the text or the fixes between
 * their check and their store).
 * Entries whose slot is not bound yet
 * (lazy), not final, or one the runtime may still rebind are left as they
 * are. Idempotent. Call
 * with the runtime's lock held, never from a signal handler. @xr: the
 * executable ranges of every loaded module ([lo, hi) pairs, @nxr of
 * them): a bound slot points into one. @hint: where PLT0 was found last
 * time (link-time address; 0: search the text), updated.
 */
void fi_plt_direct(const struct dl_phdr_info *info, const uint64_t (*xr)[2],
		   size_t nxr, uint64_t *hint, const struct fi_plt_pass *p,
		   struct fi_plt_result *r);

/* Has module @info a PLT slot outside PT_GNU_RELRO? (Cheap: no text read.) */
bool fi_plt_any_writable(const struct dl_phdr_info *info);

#endif /* FI_UPCALL_H */
