/* SPDX-License-Identifier: MIT */
/* An uninstrumented plug-in dlopen'ed with RTLD_DEEPBIND: its own lookup
 * scope (itself, then libc) comes first, so its sigaction is libc's. */
#define _GNU_SOURCE
#include <signal.h>

#ifdef SIGS_SIGSET
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
