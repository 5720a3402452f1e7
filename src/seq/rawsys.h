/* SPDX-License-Identifier: MIT */
/*
 * A system call made directly, not through libc. The runtime's start-up
 * must not call libc functions that an LD_PRELOAD interposer may define
 * (libfaketime: clock_gettime, getrandom, getpid, syscall...): such an
 * interposer is kCFI code that would run before it is rewritten, from
 * inside the runtime, and trap there (issue 14, docs/compat.md).
 */
#ifndef FI_RAWSYS_H
#define FI_RAWSYS_H

/* The raw result: >= 0, or -errno. */
static inline long fi_sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

#endif
