/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL side of the coarse check (src/rt/coarse.h, coarsetrap.c):
 * decoding its ud2 and the one case it lets through.
 */
#ifndef FI_COARSETRAP_H
#define FI_COARSETRAP_H

#include <stdbool.h>
#include <stdint.h>

#include "trapinfo.h"

/*
 * coarse.S: if @ip is the ud2 of __fineibt_coarse_<reg>, the register
 * number (0..15), and where cfi=warn continues in @resume (the path that
 * restores the registers and makes the call); else -1.
 */
int fi_coarse_trap_reg(uint64_t ip, uint64_t *resume);

/*
 * Decode a stop of the coarse check into @t (FI_TRAP_COARSE): target,
 * call site (the return address's call through the module's thunk, when
 * it is one), module, warn. False: @r->ip is no such ud2.
 */
bool fi_coarse_decode(const struct fi_trap_regs *r, struct fi_trap *t);

/*
 * @t (FI_TRAP_COARSE) targets an entry the table cannot hold: a function
 * an uninstrumented library exports (its dynamic symbol, exactly), or a
 * function of a registered module built without kCFI (a symbol there and
 * an ENDBR): let the call go on, unreported (docs/compat.md). Never the
 * runtime's own exports (its thunks jump to a register) nor the
 * context-switching functions (longjmp, setcontext and kin).
 */
bool fi_coarse_take(const struct fi_trap *t);

#endif
