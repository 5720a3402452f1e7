// SPDX-License-Identifier: MIT
/*
 * rt_ktraps (tests/e2e/rt_traps_in_place.sh): says where the runtime's
 * trap list of this executable is (fineibt_debug_object("module_traps"):
 * inside the executable's own mapping, or a copy elsewhere: the arena,
 * whose first chunk is in libfineibt's .bss), then, with an
 * argument, makes a call through a pointer of the wrong type, which the
 * trap handler must recognise from that list.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const void *fineibt_debug_object(const char *name) __attribute__((weak));

typedef int (*fn_int)(int);
typedef int (*fn_str)(const char *);

static int take_str(const char *s)
{
	return (int)strlen(s);
}

void *volatile ptr = (void *)take_str;

int main(int argc, char **argv)
{
	const void *t = fineibt_debug_object ?
			fineibt_debug_object("module_traps") : NULL;
	Dl_info di, self;

	/* In this executable's own mapping, not merely in some module's: the
	 * runtime's arena starts in libfineibt's .bss. */
	printf("traps %s\n", !t ? "none" :
	       dladdr(t, &di) && dladdr((void *)main, &self) &&
	       di.dli_fbase == self.dli_fbase ? "in-module" : "copied");
	fflush(stdout);
	if (argc > 1)
		return ((fn_int)ptr)(1);	/* the type does not match */
	/* A second checked call site: the list has more than one entry. */
	return ((fn_str)ptr)("") != 0;
}
