/* SPDX-License-Identifier: MIT */
/* An uninstrumented plug-in dlopen'ed with RTLD_DEEPBIND: its own lookup
 * scope (itself, then libc) comes first, so its sigaction is libc's. */
#define _GNU_SOURCE
#include <signal.h>

void plugin_install(void (*h)(int))
{
	struct sigaction sa = { .sa_handler = h };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, 0);
}
