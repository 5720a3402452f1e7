// SPDX-License-Identifier: MIT
/*
 * warn_reload LIB...: each LIB in turn is dlopen'ed, its confused call
 * made twice, and dlclose'd (tests/e2e/warn_reload.sh). Prints where
 * each library's wr_confused was and how many confused calls ran on.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int calls = 0;

	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		long (*f)(long);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 2;
		}
		f = (long (*)(long))dlsym(h, "wr_confused");
		if (!f)
			return 3;
		printf("at %p\n", (void *)f);
		fflush(stdout);
		for (int k = 0; k < 2; k++, calls++)
			(void)f(i);
		dlclose(h);
	}
	printf("warn_reload ok %d\n", calls);
	return 0;
}
