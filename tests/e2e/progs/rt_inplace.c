// SPDX-License-Identifier: MIT
/*
 * rt_inplace.sh's program: a confused indirect call must still trap
 * after a start whose first window wrote the state in place. With
 * -DRT_INPLACE_THREAD, an IFUNC resolver of the executable (it runs while
 * the loader relocates, before every constructor, libfineibt.so's
 * included) first starts a second task sharing the address space: a
 * thread made by a raw clone that only waits, so the first window must
 * find the process not alone and write through the kernel. With
 * -DRT_INPLACE_SIGILL, the resolver installs a SIGILL handler instead
 * (raw rt_sigaction: libc is not initialised yet), which the runtime,
 * starting first without asking about SIGILL, must keep as the
 * program's: argument "ud2" (not a CFI site) reaches it (exit 7). In
 * every case the state must be read-only when main runs (rt_state_ro).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RT_INPLACE_THREAD
#include "../../lib/rawspawn.h"

static char rt_stack[16384] __attribute__((aligned(16)));

/* No libc: libc is not initialised yet (tests/lib/rawspawn.h). */
static void rt_spawn(void)
{
	(void)fi_test_spawn_paused(rt_stack + sizeof(rt_stack));
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
#elif defined(RT_INPLACE_SIGILL)
#include <signal.h>
#include <sys/syscall.h>

/* The program's handler: a raw exit_group(7), nothing of libc's. */
static void rt_on_ill(int sig)
{
	(void)sig;
	__asm__ volatile("syscall" :: "a"((long)SYS_exit_group), "D"(7L)
			 : "rcx", "r11", "memory");
	__builtin_unreachable();
}

void rt_restore(void);
__asm__(".text\n\t.type rt_restore, @function\nrt_restore:\n\t"
	"mov $15, %eax\n\tsyscall\n\t.size rt_restore, .-rt_restore\n");

static int rt_two(void)
{
	return 2;
}

/* The kernel's struct sigaction: handler, flags, restorer, mask. */
static int (*rt_resolve(void))(void)
{
	struct { void *h; unsigned long flags; void *restorer; unsigned long mask; }
		k = { (void *)rt_on_ill, 0x04000000 /* SA_RESTORER */,
		      (void *)rt_restore, 0 };
	long ret;

	__asm__ volatile("mov $8, %%r10\n\tsyscall"
			 : "=a"(ret)
			 : "0"((long)SYS_rt_sigaction), "D"((long)SIGILL),
			   "S"(&k), "d"(0L)
			 : "rcx", "r10", "r11", "memory");
	(void)ret;
	return rt_two;
}

int rt_ifunc(void) __attribute__((ifunc("rt_resolve")));
#else
static int rt_ifunc(void)
{
	return 2;
}
#endif

/*
 * Is the runtime's state read-only now? Its address is in the anchor's
 * name ("/memfd:fineibt-rt:ADDR:ABI" in /proc/self/maps); the mapping
 * holding it must not be writable once main runs, whatever the start
 * did (a block written in place is sealed before any code of the
 * program runs). 1 read-only, 0 writable, -1 not found.
 */
static int rt_state_ro(void)
{
	unsigned long addr = 0, lo, hi;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "r");
	int ro = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "/memfd:fineibt-rt:");

		if (p)
			addr = strtoul(p + strlen("/memfd:fineibt-rt:"), NULL, 16);
	}
	rewind(f);
	while (addr && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3 &&
		    lo <= addr && addr < hi)
			ro = perm[1] != 'w';
	fclose(f);
	return ro;
}

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

	int ro = rt_state_ro();

	/* "inplace 2" only with the state read-only at main. */
	printf("inplace %d%s\n", rt_ifunc(),
	       ro == 1 ? "" : ro ? " (no state found)" : " (state writable at main)");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "ud2"))
		__builtin_trap();
	if (argc > 1)
		return g(atoi(argv[1])) == 0;
	return 0;
}
