/* SPDX-License-Identifier: MIT */
/*
 * tests/e2e/rt_inplace_dlstart.sh: a plug-in host built with plain clang
 * (no runtime of its own, one thread) that dlopens a fineibt-cc library
 * (argv[1]: rt_sparse.c built -DRT_SPARSE_LIB), so that libfineibt.so is
 * loaded and started by this dlopen, after main: the program's code has
 * run, and a write primitive of it could aim an io_uring ring at the
 * library's text while it is rewritten. Prints, as rt_sparse does, for a
 * page of the library with a site and a page of its padding, the mapping
 * holding it ("file", "anon") and whether the page is the file's
 * ("shared") or a private copy ("private"); then whether its calls work.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "../../lib/mapkind.h"

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*calls)(void);
	uintptr_t (*pad)(void);
	uintptr_t site;

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	calls = (int (*)(void))dlsym(h, "sp_lib_calls");
	pad = (uintptr_t (*)(void))dlsym(h, "sp_lib_pad_page");
	site = (uintptr_t)dlsym(h, "sp_lib_first");
	if (!calls || !pad || !site)
		return 3;
	printf("lib site %s %s pad %s %s\n", kind(site), page(site),
	       kind(pad()), page(pad()));
	printf("calls %s\n", calls() ? "ok" : "wrong");
	return 0;
}
