/* SPDX-License-Identifier: MIT */
#ifndef FI_INTERPOSE_H
#define FI_INTERPOSE_H

/*
 * The interposition layer (docs/architecture.md): libc's entry points the
 * runtime takes over, and what the layers below reach of them through the
 * variant's table (variant.h).
 *
 *   signals.c   sigaction, signal, sigset, ... for SIGILL (docs/traps.md)
 *   dlhook.c    dlopen: rewrite what it loaded (docs/runtime.md, "Late
 *               modules")
 *   dlsym_so.c  dlsym/dlvsym of libfineibt.so: veneers for uninstrumented
 *               targets (docs/compat.md), and kCFI modules' GOT slots for
 *               dlsym, dlvsym and dlopen bound to these
 *   dlsym_a.c   dlsym/dlvsym of the static runtime (--wrap)
 *   sigbind.c   RTLD_DEEPBIND modules' references to the SIGILL family
 *   foreign.c   dlsym veneers for uninstrumented targets, and the sites
 *               the SIGILL handler opens for them (docs/compat.md)
 *   plt.c       the PLT's direct entries: a module whose GOT stays
 *               writable calls through its slots' values, not the slots
 *   variant_so.c, variant_a.c   the table each runtime variant provides
 *
 * Its parts: foreign.h and plt.h, included here (each is the header of
 * its .c file, which includes only its own part, so that no two modules
 * of the layer include each other). What the layers below reach of the
 * layer: the variant's table (variant.h) and, by name, the functions
 * src/rt/upcall.h declares (docs/architecture.md, "Calls that go up").
 */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "foreign.h"
#include "plt.h"

/*
 * What dlsym()/dlvsym() hand out for @name when libc's lookup found @p:
 * for libc's own entry of a SIGILL-installing function (sigaction,
 * signal, sigset, ...), fineibt's interposer; otherwise @p. A lookup
 * that starts after libfineibt (RTLD_NEXT from a later module, a libc
 * handle) would otherwise bypass the interposition.
 */
void *fi_sig_entry(const char *name, void *p);
/* The interposer of that name, or NULL; libc's base (its sigaction's). */
void *fi_sig_own(const char *name);
/* True if @addr is the entry of one of the interposers above: the address
 * dlsym hands out for libc's name under the static runtime. */
bool fi_sig_is_own(uint64_t addr);
const void *fi_sig_libc_base(void);
/*
 * The sigaction interposer under a hidden name no lookup order changes
 * (load/start.c publishes it for a dlmopen namespace's copy).
 */
int fi_sig_sigaction(int sig, const struct sigaction *act,
		     struct sigaction *old);

/*
 * After dlopen(..., RTLD_DEEPBIND) returned @handle: rebind the references
 * to libc's SIGILL-installing functions of that module and those loaded
 * after it to signals.c's interposers (sigbind.c). Returns how many slots
 * were rebound.
 */
int fi_sigbind_rebind(void *handle);

/* dlhook.c's dlopen, whatever the process's lookup order binds the name to. */
void *fi_dlopen_local(const char *file, int mode);

/* dlsym(RTLD_NEXT, @name) as libc answers it for the runtime's object,
 * interposers aside (dlsym_so.c; next_a.c in the static runtime); the
 * variant's table's next_libc. */
void *fi_next_libc(const char *name);
/* libc's dlopen, resolved and recorded (in start-up's last window). */
void fi_dlhook_prime(void);

/* dlsym_so.c: what a kCFI module's GOT slot for @name must hold (dlsym,
 * dlvsym, dlopen: ours), or NULL. */
void *fi_bind_want(const char *name);
/* dlsym_so.c, after a rewriting pass that took new modules: bind kCFI
 * modules' dlsym, dlvsym and dlopen to ours whatever the lookup order.
 * True when a registered module is still being loaded: bind again next
 * pass. */
bool fi_bind_interposers(void);

#endif /* FI_INTERPOSE_H */
