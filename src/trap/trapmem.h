/* SPDX-License-Identifier: MIT */
/*
 * Memory the SIGILL handler and its report may read (docs/traps.md):
 * only what is known to be mapped, the executable views of a registered
 * module, and stack slots read with process_vm_readv, which fails
 * cleanly where a plain load would fault. Async-signal-safe.
 */
#ifndef FI_TRAPMEM_H
#define FI_TRAPMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"

/* Bytes readable from run-time @addr to the end of one executable view of @m. */
size_t fi_trap_span(const struct fi_module *m, uint64_t addr);

/*
 * @len bytes of live text at run-time @addr if they lie in one executable
 * view of a registered module (returned in @mp), else NULL. The live
 * bytes, not the view's buffer: they are what the CPU executed.
 */
const uint8_t *fi_trap_text(uint64_t addr, size_t len,
			    const struct fi_module **mp);
/* The same inside module @m, already known (NULL: none). */
const uint8_t *fi_trap_text_in(const struct fi_module *m, uint64_t addr,
			       size_t len);

/* 8 bytes at @addr, or false if they are not mapped (never faults). */
bool fi_trap_read64(uint64_t addr, uint64_t *val);

/*
 * The same for the slot at the top of the stack a call just pushed its
 * return address to (a BHI stub's, a preamble's caller's): in a sandbox
 * without process_vm_readv that slot is read directly, as it is mapped.
 */
bool fi_trap_read_pushed(uint64_t addr, uint64_t *val);

#endif /* FI_TRAPMEM_H */
