/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL side (docs/traps.md): decode every #UD the kCFI and
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

#include <signal.h>
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
 * Put the program's recorded handler back into the kernel and stop
 * interposing sigaction/signal for SIGILL. Returns 0 or -errno.
 */
int fi_trap_uninstall(void);

bool fi_trap_installed(void);

/*
 * What the SIGILL-installing interposers (src/interpose/signals.c) build
 * on. libc's sigaction as resolved at load time, or the system call
 * itself (fully static, or before the constructor): 0 or -1 and errno.
 */
int fi_trap_sys_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old);
/* libc's signal (@sysv: sysv_signal), or NULL before the constructor. */
typedef sighandler_t (*fi_signal_fn)(int, sighandler_t);
fi_signal_fn fi_trap_real_signal(bool sysv);
/* fineibt's SIGILL handler (trap.c). */
void fi_trap_handler(int sig, siginfo_t *si, void *ctx);
/*
 * Inside a write window (@s writable): record @act as the handler
 * non-CFI SIGILLs chain to. @act is the program's (its memory): copied
 * to this stack first, and written from there, between two puts of the
 * counter (odd meanwhile). Our own handler is never recorded (it could
 * only come back through a raw syscall's oldact): chaining to it would
 * recurse. 0 or -errno (the record is then unchanged). Inline: the
 * sigaction interposer runs it at every install of a SIGILL handler.
 */
static inline int fi_trap_user_set(const struct fi_rt_sig *s,
				   const struct sigaction *act)
{
	static const struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct sigaction a = act->sa_sigaction == fi_trap_handler ? dfl : *act;
	unsigned int seq = s->user_seq;
	int err;

	/* No handler reads it before fineibt's holds SIGILL: one put. */
	if (!s->installed)
		return fi_rt_put(&s->user_act, &a, sizeof(a));
	if ((err = FI_RT_PUT(s->user_seq, seq + 1)))
		return err;
	err = fi_rt_put(&s->user_act, &a, sizeof(a));
	FI_RT_PUT(s->user_seq, seq + 2);
	return err;
}

/*
 * Inside a write window, at the install of fineibt's handler (@s not
 * installed yet): @act recorded as fi_trap_user_set does, and installed
 * set, in one put. 0 or -errno.
 */
static inline int fi_trap_user_installed(const struct fi_rt_sig *s,
					 const struct sigaction *act)
{
	static const struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct fi_rt_sig n = *s;

	n.user_act = act->sa_sigaction == fi_trap_handler ? dfl : *act;
	n.installed = true;
	return fi_rt_put(s, &n, offsetof(struct fi_rt_sig, installed) +
			 sizeof(n.installed));
}

/*
 * Decode a #UD at @r->ip. Returns true and fills @t for a CFI trap of a
 * registered module or stub array; false (t->kind = FI_TRAP_NONE) for
 * anything else. Async-signal-safe.
 */
bool fi_trap_decode(const struct fi_trap_regs *r, struct fi_trap *t);

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
