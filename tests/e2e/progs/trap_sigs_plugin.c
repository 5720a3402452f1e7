/* SPDX-License-Identifier: MIT */
/* An uninstrumented plug-in dlopen'ed with RTLD_DEEPBIND: its own lookup
 * scope (itself, then libc) comes first, so its sigaction is libc's. */
#define _GNU_SOURCE
#include <signal.h>

#if defined(SIGS_SIGVEC)
/* Built with -z now too: its GOT slot of the compat sigvec@GLIBC_2.2.5
 * (no default version) is in RELRO, rebound only while it holds libc's
 * sigvec, which the runtime finds by that version at start-up. */
struct plugin_sigvec { void (*sv_handler)(int); int sv_mask, sv_flags; };
extern int compat_sigvec(int, const struct plugin_sigvec *, struct plugin_sigvec *);
__asm__(".symver compat_sigvec, sigvec@GLIBC_2.2.5");

void plugin_install(void (*h)(int))
{
	struct plugin_sigvec sv = { .sv_handler = h };

	compat_sigvec(SIGILL, &sv, 0);
}
#elif defined(SIGS_SIGSET)
/* Built with -z now too: its GOT slot of sigset is in RELRO, rebound only
 * while it holds libc's sigset (src/interpose/sigbind.c). */
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
void plugin_install(void (*h)(int))
{
	sigset(SIGILL, h);
}
#else
void plugin_install(void (*h)(int))
{
	struct sigaction sa = { .sa_handler = h };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, 0);
}
#endif
