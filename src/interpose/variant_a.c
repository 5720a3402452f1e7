// SPDX-License-Identifier: MIT
/*
 * The static runtime's table (libfineibt.a only; variant_so.c is the
 * shared one, src/rt/variant.h says what each entry is). No early start
 * from the loader's relocation (src/load/preinit.c starts it instead),
 * and no dlsym interposer binding GOT slots: the executable's own lookups
 * come to dlsym_a.c through --wrap.
 *
 * dlhook.c is linked into the executable only when it calls dlopen (the
 * archive member that defines it): the one weak reference, so that the
 * table does not pull the dlopen interposer into every program. Hidden:
 * the link resolves it, to dlhook.c's function or to NULL, no loader
 * lookup.
 */
#include <stddef.h>

#include "interpose.h"
#include "variant.h"

void fi_dlhook_prime(void) __attribute__((weak, visibility("hidden")));

const struct fi_variant fi_variant = {
	.sigaction = fi_sig_sigaction,
	.sig_own = fi_sig_own,
	.sig_is_own = fi_sig_is_own,
	.dlopen_prime = fi_dlhook_prime,
	.bind_interposers = NULL,
	.bind_want = NULL,
	.early_said_plain = NULL,
	.early_forget = NULL,
	.first_unrun = NULL,
	.in_executable = true,
	.alloc_libc_bytes = NULL,
	.env_startup = NULL,
	.next_libc = fi_next_libc,
};
