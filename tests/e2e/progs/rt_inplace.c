// SPDX-License-Identifier: MIT
/*
 * rt_inplace.sh's program: a confused indirect call must still trap
 * after a start whose first window wrote the state in place. With
 * -DRT_INPLACE_THREAD, an IFUNC resolver of the executable (it runs while
 * the loader relocates, before every constructor, libfineibt.so's
 * included) first starts a second task sharing the address space: a
 * thread made by a raw clone that only waits, so the first window must
 * find the process not alone and write through the kernel.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#ifdef RT_INPLACE_THREAD
#include <sched.h>
#include <sys/syscall.h>

static char rt_stack[16384] __attribute__((aligned(16)));

/* The child runs on rt_stack and never returns: pause() for ever (the
 * process's exit_group ends it). No libc: libc is not initialised yet. */
static void rt_spawn(void)
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
			   "S"(rt_stack + sizeof(rt_stack)), "d"(0L),
			   [pause] "i"(SYS_pause)
			 : "rcx", "r11", "r8", "r10", "memory");
	(void)ret;
}

static int rt_two(void)
{
	return 2;
}

static int (*rt_resolve(void))(void)
{
	rt_spawn();
	return rt_two;
}

int rt_ifunc(void) __attribute__((ifunc("rt_resolve")));
#else
static int rt_ifunc(void)
{
	return 2;
}
#endif

typedef int (*fn1_t)(int);

static int rt_one(int a, int b)
{
	return a + b;
}

int main(int argc, char **argv)
{
	/* Through an opaque pointer of the wrong type: a CFI failure. */
	fn1_t f = (fn1_t)(void *)rt_one;
	volatile fn1_t g = f;

	printf("inplace %d\n", rt_ifunc());
	fflush(stdout);
	if (argc > 1)
		return g(atoi(argv[1])) == 0;
	return 0;
}
