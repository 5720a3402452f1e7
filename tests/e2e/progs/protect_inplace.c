// SPDX-License-Identifier: MIT
/*
 * protect_inplace.sh's program: code of the program that runs before the
 * runtime (an IFUNC resolver of the executable, while the loader
 * relocates it, before every constructor) leaves something behind that
 * acts while start-up writes the state in place, without being a second
 * task (docs/protection.md, "The first window"):
 *   - RACE_SIGNAL: a SIGALRM handler and an interval timer. Each tick
 *     tries to set FINEIBT_F_WARN in the state's cfg.flags (a write that
 *     succeeds only while the page is writable: process_vm_writev on the
 *     process itself, which honours the page's protection), until it is
 *     refused: a confused call then reports and goes on instead of
 *     trapping.
 * Without the fix (docs/protection.md, "The first window"): the state
 * written in place from the first window to the registration window's
 * end, the handler's write between the two lands, and the confused call
 * reports "mode: kcfi,warn" and survives. With it, a module with an
 * IFUNC resolver of the program means through the kernel: every write
 * after the first window opens is refused and the call traps.
 *   - PI_PRESET: the resolver writes one byte, the state's wr.how =
 *     FI_RT_KERNEL, in the loader's writable .bss before the runtime
 *     starts. Before the fix the first window took the state as set up
 *     and it stayed writable for good ("state writable at main"); main
 *     asks with process_vm_writev of the word's own value.
 * The state's address: libfineibt.so's base (the link map) plus
 * FI_AREA_OFF (its fi_rt_area, from nm) plus the state's offset in the
 * area and cfg.flags' in the state (runtime.h).
 */
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rawsys.h"
#include "runtime.h"

#ifndef FI_AREA_OFF
#error "FI_AREA_OFF: fi_rt_area's offset in libfineibt.so"
#endif

/* Raw system calls (rawsys.h, fi_sys6): the resolver runs before the
 * executable's PLT is bound (and before libc is initialised). */
#define pi_sys fi_sys6

/* The kernel's sigaction and the return from a handler (rt_sigreturn). */
struct pi_ksa {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};
void pi_restore(void);
__asm__(".text\n.type pi_restore,@function\npi_restore:\n\t"
	"mov $15, %eax\n\tsyscall\n\t.size pi_restore,.-pi_restore\n");

static volatile unsigned int *pi_target;
static volatile int pi_forged, pi_refused;

static void pi_stop(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	pi_sys(SYS_setitimer, ITIMER_REAL, (long)&off, 0, 0, 0, 0);
}

/* Async-signal-safe: plain system calls and a read of the target. */
static void pi_tick(int sig)
{
	unsigned int v = *pi_target | FINEIBT_F_WARN;
	struct iovec l = { &v, sizeof(v) };
	struct iovec r = { (void *)pi_target, sizeof(v) };

	(void)sig;
	if (pi_sys(SYS_process_vm_writev, pi_sys(SYS_getpid, 0, 0, 0, 0, 0, 0),
		   (long)&l, 1, (long)&r, 1, 0) == sizeof(v)) {
		pi_forged++;
		return;
	}
	pi_refused = 1;
	pi_stop();
}

/* Does the path's last part start with "libfineibt.so"? (no libc) */
static int pi_is_rt(const char *p)
{
	const char *b = p, *w = "libfineibt.so";

	for (; *p; p++)
		if (*p == '/')
			b = p + 1;
	for (; *w; w++, b++)
		if (*b != *w)
			return 0;
	return 1;
}

static int pi_two(void)
{
	return 2;
}

static int (*pi_resolve(void))(void)
{
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	struct pi_ksa sa = { pi_tick, SA_RESTART | 0x04000000 /* SA_RESTORER */,
			     pi_restore, 0 };

	for (struct link_map *l = _r_debug.r_map; l; l = l->l_next)
		if (l->l_name && pi_is_rt(l->l_name))
			pi_target = (unsigned int *)(l->l_addr + FI_AREA_OFF +
				4096 + FI_RT_ARENA0 +
				offsetof(struct fi_runtime, cfg.flags));
	if (!pi_target)
		return pi_two;
#ifdef PI_PRESET
	((volatile unsigned char *)pi_target)[offsetof(struct fi_runtime, wr.how) -
		offsetof(struct fi_runtime, cfg.flags)] = FI_RT_KERNEL;
	return pi_two;
#endif
	pi_sys(SYS_rt_sigaction, SIGALRM, (long)&sa, 0, 8, 0, 0);
	pi_sys(SYS_setitimer, ITIMER_REAL, (long)&it, 0, 0, 0, 0);
	return pi_two;
}

int pi_ifunc(void) __attribute__((ifunc("pi_resolve")));

typedef int (*fn1_t)(int);

static int pi_one(int a, int b)
{
	return a + b;
}

int main(int argc, char **argv)
{
	/* Through an opaque pointer of the wrong type: a CFI failure. */
	volatile fn1_t g = (fn1_t)(void *)pi_one;

	struct fineibt_config cfg;

	pi_stop();
	/* The word written is the state's cfg.flags (else the test would
	 * prove nothing): it reads what the runtime says its flags are. */
	if (!pi_target || fineibt_get_config(&cfg) || cfg.flags != *pi_target) {
		printf("target is not the state's cfg.flags\n");
		return 1;
	}
#ifdef PI_PRESET
	{
		unsigned int v = *pi_target;
		struct iovec l = { &v, sizeof(v) };
		struct iovec r = { (void *)pi_target, sizeof(v) };

		printf("inplace %d state %s at main\n", pi_ifunc(),
		       process_vm_writev(getpid(), &l, 1, &r, 1, 0) == sizeof(v) ?
		       "writable" : "read-only");
	}
#else
	printf("inplace %d forged %d refused %d\n", pi_ifunc(), pi_forged,
	       pi_refused);
#endif
	fflush(stdout);
	if (argc > 1) {
		g(atoi(argv[1]));
		printf("survived\n");
	}
	return 0;
}
