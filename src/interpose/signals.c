/* SPDX-License-Identifier: MIT */
/*
 * The SIGILL-installing entry points of libc, interposed (docs/traps.md,
 * "The program's own SIGILL handler"): sigaction, signal, sigset and the
 * rest of the family record the program's SIGILL handler in the runtime
 * state instead of evicting fineibt's (src/trap/trap.c holds the handler,
 * the record and libc's entries, resolved at load time). The table of
 * these interposers by name answers dlsym (dlsym_so.c, dlsym_a.c), the
 * PLT's direct entries (src/interpose/plt.c), DEEPBIND rebinding (sigbind.c)
 * and the handler's coarse check (src/trap/trap.c, through the variant's
 * table: variant_so.c, variant_a.c).
 *
 * Exported under libc's names and versions (src/libfineibt.map); in the
 * static runtime they are the executable's own definitions.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "interpose.h"
#include "runtime.h"
#include "trap.h"

#define FI_EXPORT	__attribute__((visibility("default")))

/*
 * The program (or a library probing CPU features) installing a SIGILL
 * handler must not evict ours: record its handler as the one to chain to
 * and answer with the one recorded before. Other signals, and SIGILL
 * while fineibt is not installed, go straight to libc. A raw
 * rt_sigaction syscall bypasses this (see docs/traps.md).
 */
FI_EXPORT int sigaction(int sig, const struct sigaction *act,
			struct sigaction *old)
{
	const struct fi_runtime *rt;
	sigset_t saved;
	int ret = 0;

	if (sig != SIGILL)
		return fi_trap_sys_sigaction(sig, act, old);
	/* A second instance (dlmopen): the process's runtime holds SIGILL. */
	if (fi_rt()->primary)
		return fi_rt()->primary->self.sigaction(sig, act, old);
	rt = fi_rt_write_begin(&saved);
	if (!rt)
		return -1;	/* errno: the state cannot be written */
	if (!rt->sig.installed) {
		ret = fi_trap_sys_sigaction(sig, act, old);
	} else {
		struct sigaction prev = rt->sig.user_act;
		int err = act ? fi_trap_user_set(&rt->sig, act) : 0;

		if (err) {
			errno = -err;
			ret = -1;
		} else if (old) {
			*old = prev;
		}
	}
	fi_rt_write_end(&saved);
	return ret;
}

/* The interposer above, whatever the lookup order binds the name to. */
int fi_sig_sigaction(int sig, const struct sigaction *act,
		     struct sigaction *old)
	__attribute__((alias("sigaction"), visibility("hidden")));

/* signal()-style installs of SIGILL, expressed as the sigaction they mean. */
static sighandler_t fi_signal_as(int sig, sighandler_t h, int flags,
				 bool self_mask)
{
	struct sigaction act = { .sa_handler = h, .sa_flags = flags }, old;

	if (h == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&act.sa_mask);
	if (self_mask)
		sigaddset(&act.sa_mask, sig);
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* BSD semantics, as glibc's signal(): restart, sig blocked in its handler. */
FI_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	fi_signal_fn f = fi_trap_real_signal(false);

	if (sig != SIGILL && f)
		return f(sig, h);
	return fi_signal_as(sig, h, SA_RESTART, true);
}

FI_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return signal(sig, h);
}

/* System V semantics: one-shot, not blocked in its handler. */
FI_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	fi_signal_fn f = fi_trap_real_signal(true);

	if (sig != SIGILL && f)
		return f(sig, h);
	return fi_signal_as(sig, h, SA_RESETHAND | SA_NODEFER, false);
}

/*
 * The other libc entries that install a disposition (glibc implements
 * them on its internal sigaction, which no interposer sees). Each is
 * expressed as the sigaction it means, through the interposer above, for
 * every signal: the same code as libc's then, whatever the signal.
 */

/* Strict ISO C (-std=c11, no _GNU_SOURCE): glibc's signal() is this. */
FI_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return sysv_signal(sig, h);
}

/* An alias of signal() in glibc. */
FI_EXPORT sighandler_t ssignal(int sig, sighandler_t h)
{
	return signal(sig, h);
}

FI_EXPORT int __sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	return sigaction(sig, act, old);
}

/* One signal in a set, or -1 (EINVAL) for a bad number. */
static int fi_sig_one(int sig, sigset_t *set)
{
	sigemptyset(set);
	return sigaddset(set, sig);
}

/*
 * System V sigset(): SIG_HOLD blocks @sig and keeps its disposition;
 * anything else installs it (no flags, empty mask) and unblocks @sig.
 * Returns SIG_HOLD when @sig was blocked, else the previous disposition.
 */
FI_EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
	struct sigaction act = { .sa_handler = h }, old;
	sigset_t one, was;

	if (h == SIG_ERR || fi_sig_one(sig, &one) < 0) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (h == SIG_HOLD) {
		if (sigprocmask(SIG_BLOCK, &one, &was) < 0 ||
		    sigaction(sig, NULL, &old) < 0)
			return SIG_ERR;
		return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
	}
	sigemptyset(&act.sa_mask);
	if (sigaction(sig, &act, &old) < 0 ||
	    sigprocmask(SIG_UNBLOCK, &one, &was) < 0)
		return SIG_ERR;
	return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}

FI_EXPORT int sigignore(int sig)
{
	struct sigaction act = { .sa_handler = SIG_IGN };

	sigemptyset(&act.sa_mask);
	return sigaction(sig, &act, NULL);
}

/*
 * 4.2BSD sigvec(): a compat symbol of glibc (sigvec@GLIBC_2.2.5, no
 * header declares it since 2.21); old binaries still reference it.
 */
struct fi_sigvec {
	sighandler_t sv_handler;
	int sv_mask;		/* bit sig - 1 blocks sig (signals 1..32) */
	int sv_flags;
};
#define FI_SV_ONSTACK	1
#define FI_SV_INTERRUPT	2
#define FI_SV_RESETHAND	4

int fi_sigvec(int sig, const struct fi_sigvec *vec, struct fi_sigvec *ovec);
__asm__(".symver fi_sigvec, sigvec@GLIBC_2.2.5");

FI_EXPORT int fi_sigvec(int sig, const struct fi_sigvec *vec,
			struct fi_sigvec *ovec)
{
	struct sigaction act = { .sa_handler = SIG_DFL }, old;

	if (vec) {
		act.sa_handler = vec->sv_handler;
		sigemptyset(&act.sa_mask);
		for (int s = 1; s <= 32; s++) {
			if (vec->sv_mask & (int)(1U << (s - 1)))
				sigaddset(&act.sa_mask, s);
		}
		if (vec->sv_flags & FI_SV_ONSTACK)
			act.sa_flags |= SA_ONSTACK;
		if (!(vec->sv_flags & FI_SV_INTERRUPT))
			act.sa_flags |= SA_RESTART;
		if (vec->sv_flags & FI_SV_RESETHAND)
			act.sa_flags |= SA_RESETHAND | SA_NODEFER;
	}
	if (sigaction(sig, vec ? &act : NULL, &old) < 0)
		return -1;
	if (ovec) {
		ovec->sv_handler = old.sa_handler;
		ovec->sv_mask = 0;
		for (int s = 1; s <= 32; s++) {
			if (sigismember(&old.sa_mask, s) == 1)
				ovec->sv_mask |= (int)(1U << (s - 1));
		}
		ovec->sv_flags = ((old.sa_flags & SA_ONSTACK) ? FI_SV_ONSTACK : 0) |
				 ((old.sa_flags & SA_RESTART) ? 0 : FI_SV_INTERRUPT) |
				 ((old.sa_flags & SA_RESETHAND) ? FI_SV_RESETHAND : 0);
	}
	return 0;
}

/* ------------------------------------------- lookups that reach libc's */

/* The module containing @p (its base), through the loader. */
static const void *fi_sig_object_of(const void *p)
{
	Dl_info info;

	return p && dladdr(p, &info) ? info.dli_fbase : NULL;
}

/* sigset and sigignore are ours here; libc marks its declarations deprecated. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static const struct { const char *name; void *fn; } fi_sig_entries[] = {
	{ "sigaction", (void *)sigaction },
	{ "__sigaction", (void *)__sigaction },
	{ "signal", (void *)signal },
	{ "bsd_signal", (void *)bsd_signal },
	{ "ssignal", (void *)ssignal },
	{ "sysv_signal", (void *)sysv_signal },
	{ "__sysv_signal", (void *)__sysv_signal },
	{ "sigset", (void *)sigset },
	{ "sigignore", (void *)sigignore },
	{ "sigvec", (void *)fi_sigvec },
};

void *fi_sig_own(const char *name)
{
	/* Every name above starts with 's', '_' or 'b': the others without
	 * a call (asked for each PLT slot of each module at start-up). */
	if (!name || (name[0] != 's' && name[0] != '_' && name[0] != 'b'))
		return NULL;
	for (size_t i = 0; i < sizeof(fi_sig_entries) / sizeof(fi_sig_entries[0]); i++) {
		if (!strcmp(name, fi_sig_entries[i].name))
			return fi_sig_entries[i].fn;
	}
	return NULL;
}

bool fi_sig_is_own(uint64_t addr)
{
	for (size_t i = 0; i < sizeof(fi_sig_entries) / sizeof(fi_sig_entries[0]); i++) {
		if ((uint64_t)(uintptr_t)fi_sig_entries[i].fn == addr)
			return true;
	}
	return false;
}
#pragma clang diagnostic pop

/*
 * NULL until fi_trap_resolve() has stored libc's sigaction: its own
 * lookups (through the dlsym interposer) must get libc's functions.
 */
const void *fi_sig_libc_base(void)
{
	return fi_sig_object_of(__atomic_load_n(&fi_rt()->sig.real_sigaction,
						 __ATOMIC_ACQUIRE));
}

void *fi_sig_entry(const char *name, void *p)
{
	void *ours = fi_sig_own(name);
	const void *libc;

	if (!p || !ours)
		return p;
	libc = fi_sig_libc_base();
	return libc && fi_sig_object_of(p) == libc ? ours : p;
}
