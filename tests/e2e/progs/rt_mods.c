// SPDX-License-Identifier: MIT
/*
 * Executable + linked kCFI library (libfi_rta.so) + dlopen'ed kCFI library
 * (libfi_rtb.so), calling each other through pointers in every direction.
 *
 *   rt_mods LIBB            all legal calls; prints "modules ok"
 *   rt_mods LIBB confuse    the executable calls libfi_rtb's function
 *                           through a pointer of the wrong type
 *   rt_mods LIBB noctor     as the first, but libfi_rtb's constructor finds
 *                           no callback to call (for libraries rewritten
 *                           only after dlopen returns: `fineibt run`)
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rt_mods.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static long cb(long x) { return 10 * x; }
NOINLINE static long callp(fnp_t f) { return f("x", 1); }

/* The address of a kCFI library's function: it has a preamble, so the
 * driver links no veneer for it (pointer equality with the library's own). */
static long (*volatile papply)(fn1_t, long) = rta_apply;

static int failures;

static void expect(const char *what, long got, long want)
{
	if (got != want) {
		fprintf(stderr, "rt_mods: %s: got %ld, want %ld\n", what, got,
			want);
		failures++;
	}
}

int main(int argc, char **argv)
{
	rtb_apply2_t apply2;
	rtb_fn_t bfn;
	rtb_ctor_value_t ctor_value;
	void *h;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 2)
		return 2;
	bool noctor = argc > 2 && !strcmp(argv[2], "noctor");

	if (!noctor)
		rta_set_cb(cb);
	expect("exe->a->exe", rta_apply(cb, 4), 40);
	expect("exe->a via pointer", papply(cb, 5), 50);
	expect("exe->a", rta_op()(6, 7), 42);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "rt_mods: %s\n", dlerror());
		return 1;
	}
	apply2 = (rtb_apply2_t)dlsym(h, "rtb_apply2");
	bfn = (rtb_fn_t)dlsym(h, "rtb_fn");
	ctor_value = (rtb_ctor_value_t)dlsym(h, "rtb_ctor_value");
	if (!apply2 || !bfn || !ctor_value)
		return 1;
	expect("b ctor->exe", ctor_value(), noctor ? -1 : 50);
	expect("exe->b->a", apply2(rta_op(), 2, 3), 6);
	expect("exe->b", bfn()(21), 42);
	expect("exe->a->b", rta_apply(bfn(), 8), 16);
	if (argc > 2 && !strcmp(argv[2], "confuse")) {
		callp((fnp_t)(void *)bfn());
		printf("survived\n");
		return 0;
	}
	if (failures)
		return 1;
	printf("modules ok\n");
	return 0;
}
