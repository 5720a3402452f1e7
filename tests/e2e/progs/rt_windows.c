// SPDX-License-Identifier: MIT
/*
 * rt_windows.sh's program: marks the phases of its life in an strace
 * (a write to fd -1 fails with EBADF and does nothing else), so that the
 * runtime's write windows can be counted per phase.
 *
 *   rt_windows KCFI-LIB OTHER-LIB
 *     "main"     start-up is over
 *     "dlopen1"  after dlopen(KCFI-LIB): a kCFI library rewritten
 *     "dlopen2"  after dlopen(KCFI-LIB) again: nothing new
 *     "dlopen3"  after dlopen(OTHER-LIB): an uninstrumented library
 *
 * Built with -DRT_WINDOWS_PREINIT, it also has a DT_PREINIT_ARRAY entry,
 * which makes the shared runtime start before any constructor (from an
 * IFUNC resolver, src/load/early.c).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#define MARK(s)	((void)!write(-1, s, sizeof(s) - 1))

typedef int (*fn1_t)(int);

static int twice(int x)
{
	return 2 * x;
}

static fn1_t volatile hook = twice;

#ifdef RT_WINDOWS_PREINIT
static void preinit(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
}

__attribute__((used, section(".preinit_array")))
static void (*const rt_windows_preinit)(int, char **, char **) = preinit;
#endif

int main(int argc, char **argv)
{
	int (*one)(int);
	void *h;

	MARK("main");
	if (argc < 3)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	one = h ? (int (*)(int))dlsym(h, "ll_one") : NULL;
	MARK("dlopen1");
	if (!h || !dlopen(argv[1], RTLD_NOW))
		return 3;
	MARK("dlopen2");
	if (!dlopen(argv[2], RTLD_NOW))
		return 4;
	MARK("dlopen3");
	printf("windows ok %d\n", hook(one ? one(1) : 0));
	return 0;
}
