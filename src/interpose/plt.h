/* SPDX-License-Identifier: MIT */
/*
 * Direct PLT entries for a module whose GOT stays writable (plt.c), a part
 * of interpose.h. What load/start.c calls here is declared in
 * src/rt/upcall.h.
 */
#ifndef FI_PLT_H
#define FI_PLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "upcall.h"

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

#endif /* FI_PLT_H */
