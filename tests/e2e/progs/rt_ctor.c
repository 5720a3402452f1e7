/*
 * rt_ctor: the program's own constructors run after the runtime's
 * (src/rt/ctor.h). ctor_first has the highest priority a program may ask
 * for (101); in a -static-fineibt executable it shares the .init_array
 * with the runtime's constructors. It installs a SIGILL handler of its
 * own, calls through a pointer, dlopens a kCFI library (CTOR_LIB) and
 * calls into it; ctor_plain (no priority) calls through the pointer too.
 * CTOR_CONFUSE set: each of the three calls is also made through another
 * type, to be caught (and logged to FINEIBT_LOG) in the process's mode.
 * main raises SIGILL, which the runtime hands to the program's handler.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fn1_t)(int);
typedef long (*fn2_t)(long, long);

__attribute__((noinline)) int ctor_twice(int x)
{
	return 2 * x;
}

static fn1_t volatile fp = ctor_twice;
static volatile sig_atomic_t own_ill;
static int first = -1, lib = -1, plain = -1;

static void on_ill(int sig)
{
	(void)sig;
	own_ill++;
}

__attribute__((constructor(101))) static void ctor_first(void)
{
	struct sigaction sa = { .sa_handler = on_ill };
	const char *path = getenv("CTOR_LIB");
	void *h = NULL;
	fn1_t f = NULL;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, NULL))
		return;
	first = fp(21);
	if (getenv("CTOR_CONFUSE"))
		((fn2_t)(void *)fp)(5, 6);
	if (path)
		h = dlopen(path, RTLD_NOW);
	if (h)
		f = (fn1_t)dlsym(h, "ctor_lib_twice");
	if (f) {
		lib = f(4);
		if (getenv("CTOR_CONFUSE"))
			((fn2_t)(void *)f)(5, 6);
	}
}

__attribute__((constructor)) static void ctor_plain(void)
{
	plain = fp(7);
	if (getenv("CTOR_CONFUSE"))
		((fn2_t)(void *)fp)(7, 8);
}

int main(void)
{
	raise(SIGILL);
	printf("first=%d lib=%d plain=%d ill=%d\n", first, lib, plain,
	       (int)own_ill);
	return 0;
}
