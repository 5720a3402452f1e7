// SPDX-License-Identifier: MIT
/*
 * tests/e2e/protect_export.sh: an uninstrumented library (plain clang, no
 * kCFI) with one export and one static function whose address only a
 * table holds: a RELATIVE relocation of .rela.dyn, whose addend is the
 * static function's link-time address. Elf64_Rela and Elf64_Sym are both
 * 24 bytes, so that relocation read 8 bytes in, as a symbol, has the
 * static function as its value. It also hands out the raw addresses of
 * libc's longjmp, abs and labs (this library's GOT: no veneer).
 */
#include <setjmp.h>
#include <stdlib.h>

__attribute__((noinline)) long plain_entry(void)
{
	return 5;
}

static __attribute__((noinline)) long plain_hidden(void)
{
	return 7;
}

long (*const plain_table[])(void) = { plain_hidden };

void *plain_raw(int which)
{
	if (which == 2)
		return (void *)labs;
	return which ? (void *)abs : (void *)longjmp;
}
