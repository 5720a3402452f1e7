/* SPDX-License-Identifier: MIT */
/* Strict C11 (no _GNU_SOURCE): glibc maps signal() to __sysv_signal. */
#include <signal.h>

void install_c11(void (*h)(int))
{
	signal(SIGILL, h);
}
