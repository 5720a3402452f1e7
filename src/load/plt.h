/* SPDX-License-Identifier: MIT */
/* Direct PLT entries for a module whose GOT stays writable (plt.c). */
#ifndef FI_PLT_H
#define FI_PLT_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * What one pass over the loaded modules shares (runtime.c), so that each
 * module does not ask again: set @held once every signal is blocked by
 * the caller (for the whole pass), with @alone = fi_live_alone() asked
 * then (no other task shares the address space; none can appear while
 * this thread runs only the runtime). @buf (@cap bytes, 0: none) is
 * scratch memory for a module's list of fixes, given back unread by the
 * caller (it holds code addresses).
 */
struct fi_plt_pass {
	bool held, alone;
	void *buf;
	size_t cap;
};

/*
 * Make every PLT entry of module @info whose GOT slot is writable and
 * already bound jump to the slot's value directly (W^X at every instant).
 * With other tasks about (or @p NULL or not @held): through a read-only
 * copy of the entry's pages, verified, then moved over them. Alone, with
 * signals blocked (@p->held, @p->alone): in place, the pages made
 * read-write (not executable) for the writes and read-execute again, each
 * fix checked against the text first; nothing but those stores runs in
 * between. Entries whose slot is not bound yet (lazy), not final, or one
 * the runtime may still rebind are left as they are. Idempotent. Call
 * with the runtime's lock held, never from a signal handler. @xr: the
 * executable ranges of every loaded module ([lo, hi) pairs, @nxr of
 * them): a bound slot points into one. @hint: where PLT0 was found last
 * time (link-time address; 0: search the text), updated.
 */
void fi_plt_direct(const struct dl_phdr_info *info, const uint64_t (*xr)[2],
		   size_t nxr, uint64_t *hint, const struct fi_plt_pass *p,
		   struct fi_plt_result *r);

/* Where a module's PLT is (run-time addresses; @sec 0: not an IBT PLT). */
struct fi_plt_layout {
	uint64_t plt0, sec;
	size_t n;		/* entries after PLT0 (and in .plt.sec) */
};

/*
 * Is @copy (sealed) of the text @text at run-time [@lo, @lo + @len) what a
 * rewrite may put there: equal but for exactly @nfx 16-byte blocks, each
 * a lazy entry of @l made direct to an address inside @xr, or a .plt.sec
 * entry made to jump to its lazy entry? Trusts neither the copy nor the
 * list of fixes it was made from (writable memory, other threads).
 */
bool fi_plt_copy_ok(const struct fi_plt_layout *l, const uint8_t *text,
		    const uint8_t *copy, uint64_t lo, uint64_t len, size_t nfx,
		    const uint64_t (*xr)[2], size_t nxr);

/* Has module @info a PLT slot outside PT_GNU_RELRO? (Cheap: no text read.) */
bool fi_plt_any_writable(const struct dl_phdr_info *info);

#endif /* FI_PLT_H */
