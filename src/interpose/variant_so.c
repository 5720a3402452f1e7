// SPDX-License-Identifier: MIT
/*
 * The shared runtime's table (libfineibt.so only; variant_a.c is the
 * static one): what the layers below the interposers call here, listed in
 * one read-only place (src/rt/variant.h) instead of weak references.
 */
#include "interpose.h"
#include "load.h"
#include "variant.h"

const struct fi_variant fi_variant = {
	.sigaction = fi_sig_sigaction,
	.sig_own = fi_sig_own,
	.sig_is_own = fi_sig_is_own,
	.dlopen_prime = fi_dlhook_prime,
	.bind_interposers = fi_bind_interposers,
	.bind_want = fi_bind_want,
	.early_said_plain = fi_early_said_plain,
	.early_forget = fi_early_forget,
	.first_unrun = fi_early_first_unrun,
	.in_executable = false,
	.alloc_libc_bytes = fi_alloc_libc_bytes,
	.env_startup = fi_env_startup,
	.next_libc = fi_next_libc,
};
