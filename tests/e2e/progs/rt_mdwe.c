// SPDX-License-Identifier: MIT
/*
 * rt_mdwe: a program (and, with -DRT_MDWE_LIB, a library it dlopens) run
 * where written memory may not become executable (progs/mdwe_run.c).
 *   rt_mdwe              prints "ok 42" (a legal indirect call)
 *   rt_mdwe confused     a call through a pointer of another type
 *   rt_mdwe dlopen LIB   dlopens LIB, prints "lib 42" from its libcall
 *   rt_mdwe dlopen LIB thread
 *                        the same with another thread running (the
 *                        runtime's path for a process not alone)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef RT_MDWE_LIB
static int lib_twice(int a) { return a * 2; }
int (*volatile lib_ptr)(int) = lib_twice;
int libcall(int a) { return lib_ptr(a); }
#else
typedef long (*rm_long_fn)(long);
static int rm_add1(int a) { return a + 1; }
int (*volatile rm_ok)(int) = rm_add1;
void *volatile rm_bad = (void *)rm_add1;

static void *rm_idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "confused"))
		((rm_long_fn)rm_bad)(1);
	if (argc > 2 && !strcmp(argv[1], "dlopen")) {
		pthread_t t;
		void *h;
		int (*f)(int);

		if (argc > 3 && pthread_create(&t, NULL, rm_idle, NULL))
			return 4;
		h = dlopen(argv[2], RTLD_NOW);
		f = h ? (int (*)(int))dlsym(h, "libcall") : NULL;

		if (!f) {
			printf("dlopen: %s\n", dlerror());
			return 3;
		}
		printf("lib %d\n", f(21));
		return 0;
	}
	printf("ok %d\n", rm_ok(41));
	return 0;
}
#endif
