/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL side (DESIGN.md section 4): decode every #UD the kCFI and
 * FineIBT sequences can raise, report it on stderr, then die (default) or
 * continue (cfi=warn); hand every other SIGILL to the program's handler.
 *
 * The handler reads only the runtime state (runtime.h: registered modules
 * and BHI stub arrays) and memory it knows is mapped (a registered
 * module's executable views, a registered stub array, the trapping
 * thread's stack top). It takes no lock, never allocates, and writes its
 * report with one write(2).
 */
#ifndef FI_TRAP_H
#define FI_TRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime.h"
#include "report.h"
#include "trapinfo.h"

/*
 * Install the SIGILL handler (SA_SIGINFO | SA_ONSTACK | SA_NODEFER). The
 * handler in place before (if any) becomes the program's recorded handler,
 * to which non-CFI SIGILLs are chained. Idempotent. Returns 0 or -errno.
 */
int fi_trap_install(void);
/*
 * The sigaction interposer under a hidden name no lookup order changes
 * (load/runtime.c publishes it for a dlmopen namespace's copy).
 */
int fi_trap_sigaction(int sig, const struct sigaction *act,
		      struct sigaction *old);

/*
 * Put the program's recorded handler back into the kernel and stop
 * interposing sigaction/signal for SIGILL. Returns 0 or -errno.
 */
int fi_trap_uninstall(void);

bool fi_trap_installed(void);

/*
 * What dlsym()/dlvsym() hand out for @name when libc's lookup found @p:
 * for libc's own entry of a SIGILL-installing function (sigaction,
 * signal, sigset, ...), fineibt's interposer; otherwise @p. A lookup
 * that starts after libfineibt (RTLD_NEXT from a later module, a libc
 * handle) would otherwise bypass the interposition.
 */
void *fi_trap_sig_entry(const char *name, void *p);
/* The interposer of that name, or NULL; libc's base (its sigaction's). */
void *fi_trap_sig_own(const char *name);
/* True if @addr is the entry of one of the interposers above: the address
 * dlsym hands out for libc's name under the static runtime. */
bool fi_trap_sig_is_own(uint64_t addr);
const void *fi_trap_libc_base(void);

/*
 * Decode a #UD at @r->ip. Returns true and fills @t for a CFI trap of a
 * registered module or stub array; false (t->kind = FI_TRAP_NONE) for
 * anything else. Async-signal-safe.
 */
bool fi_trap_decode(const struct fi_trap_regs *r, struct fi_trap *t);

/*
 * Format @t as the one-line report, with a trailing newline:
 * "fineibt: CFI failure at main+0x2a (target: handler+0x0; expected type:
 * 0x1234abcd; mode: fineibt,paranoid)": the expected type by its
 * compile-time hash (its run-time hash too under cfi=debug), the cfi=
 * list of the module that trapped (",warn" when the program goes on,
 * ",seq=v6.18" in that set). Returns the length (truncated to @len - 1,
 * NUL-terminated). Async-signal-safe.
 */
size_t fi_trap_format(const struct fi_trap *t, char *buf, size_t len);

/*
 * Stack the SIGILL handler uses beyond the kernel's signal frame (whose
 * size is the CPU's: 2.9 KiB with AVX-512), documented in docs/traps.md
 * "Stack use" and checked by tests/e2e/protect_stack.sh. The full report
 * (symbols, DWARF line, FINEIBT_LOG record) needs FI_TRAP_STACK_FULL;
 * on an alternate signal stack with less left, the first line alone with
 * addresses in hex ("; small signal stack: no symbols") needs
 * FI_TRAP_STACK_LINE, and below that a fixed line is all the handler
 * writes (the decoding before it needs about 0.5 KiB).
 */
#define FI_TRAP_STACK_FULL	4608
#define FI_TRAP_STACK_LINE	1536

#endif /* FI_TRAP_H */
