// SPDX-License-Identifier: MIT
/*
 * A second task that shares the address space and does nothing: a raw
 * clone (no libc: callers run before libc is initialised, from an IFUNC
 * resolver or inside a runtime window) whose child loops on pause() on
 * @stack_top's stack until the process's exit_group ends it. For tests
 * that need "the process is not alone" at a precise point
 * (tests/lib/rtdebug.c's FINEIBT_TEST_SPAWN_AT_WINDOW,
 * tests/e2e/progs/rt_inplace.c). Returns the child's tid, or -errno.
 */
#ifndef FI_TEST_RAWSPAWN_H
#define FI_TEST_RAWSPAWN_H

#include <sched.h>
#include <sys/syscall.h>

static inline long fi_test_spawn_paused(void *stack_top)
{
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n"
			 "2:\tmov %[pause], %%eax\n\t"
			 "syscall\n\t"
			 "jmp 2b\n"
			 "1:"
			 : "=a"(ret)
			 : "0"((long)SYS_clone),
			   "D"((long)(CLONE_VM | CLONE_FS | CLONE_FILES |
				      CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)),
			   "S"(stack_top), "d"(0L), [pause] "i"(SYS_pause)
			 : "rcx", "r11", "r8", "r10", "memory");
	return ret;
}

#endif
