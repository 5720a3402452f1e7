// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_fini.sh: an attacker with a write primitive overwrites
 * the first entry of this program's own DT_FINI_ARRAY with a function of
 * its choice, then returns from main(). ld.so's _dl_fini calls the entry
 * with a plain `call *`: no kCFI call site, so no mode checks the caller
 * side. Only a read-only .fini_array (RELRO, fineibt-cc's default) stops
 * it, by faulting on the write.
 *
 * Prints "writing FINI_ARRAY[0]" then, if the write did not fault and the
 * entry is called, "hijacked" (exit 42); otherwise main returns 0.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <unistd.h>

static void hijack(void)
{
	if (write(STDOUT_FILENO, "hijacked\n", 9) < 0)
		_exit(2);
	_exit(42);
}

static int find(struct dl_phdr_info *info, size_t size, void *out)
{
	const ElfW(Dyn) *d = NULL;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_FINI_ARRAY) {
			uintptr_t p = d->d_un.d_ptr;

			if (p < info->dlpi_addr)
				p += info->dlpi_addr;
			*(void ***)out = (void **)p;
		}
	}
	return 1;	/* the first module is the program */
}

int main(void)
{
	void (*volatile target)(void) = hijack;
	void **slot = NULL;

	dl_iterate_phdr(find, &slot);
	if (!slot) {
		puts("no DT_FINI_ARRAY");
		return 3;
	}
	puts("writing FINI_ARRAY[0]");
	fflush(stdout);
	*(void *volatile *)slot = (void *)target;
	return 0;
}
