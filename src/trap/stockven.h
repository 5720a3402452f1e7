/* SPDX-License-Identifier: MIT */
/* Typed veneers for stock kCFI modules' pointers to uninstrumented functions (stockven.c). */
#ifndef FI_STOCKVEN_H
#define FI_STOCKVEN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * After a rewriting pass (start.c): every registered stock kCFI module,
 * once the loader has relocated it, gets each pointer slot (GLOB_DAT, or a
 * plain R_X86_64_64 data relocation) naming a function X of an
 * uninstrumented object pointed at a typed veneer of X, when the module
 * defines __kcfi_typeid_X. True when a module is still being loaded (ask
 * again after the next pass).
 */
bool fi_stock_veneers(void);

/*
 * For reports: @addr inside a published typed veneer: the function it
 * jumps to, the veneer's entry, and the name it was made for. Signal-safe.
 */
bool fi_stock_veneer_at(uint64_t addr, uint64_t *fn, uint64_t *entry,
			const char **name);

#endif /* FI_STOCKVEN_H */
