/* SPDX-License-Identifier: MIT */
/*
 * fineibt_jit_unregister withdraws the region the program names, and no
 * other (docs/protection.md, "What stays writable"). The JIT's list of
 * its regions is heap memory: a write into it made an unregister of
 * region A withdraw region B, still live code, whose CFI traps were then
 * no longer decoded and went, as a plain SIGILL, to the program's own
 * SIGILL handler (a JIT turning its traps into guest exceptions would
 * swallow them). The region withdrawn is now the registered (read-only)
 * copy whose text starts at the address asked; the list only says which
 * heap record to retire.
 *
 * Here: two regions of int3 text, A and B; B's heap record (the key of
 * its registered copy) is made to claim A's address, as a write primitive
 * would; unregister(A) must withdraw A and leave B registered.
 */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "fineibt.h"
#include "runtime.h"

#define SIZE	4096

/* The registered copy of the JIT region starting at @lo, or NULL. */
static const struct fi_module *copy_at(uint64_t lo)
{
	const struct fi_runtime *rt = fi_rt();

	for (size_t i = FI_MAX_MODULES; i < rt->nmods && i < FI_MAX_SLOTS; i++) {
		if (rt->mods[i] && rt->mods[i]->text_lo == lo)
			return rt->mods[i];
	}
	return NULL;
}

int main(void)
{
	uint8_t *a = fi_test_text(SIZE), *b = fi_test_text(SIZE);
	uint64_t alo = (uint64_t)(uintptr_t)a, blo = (uint64_t)(uintptr_t)b;
	const struct fi_module *bc;
	struct fi_module *bheap;

	if (!CHECK("jit_unreg_text", a && b) ||
	    !CHECK("jit_unreg_register", !fineibt_jit_register(a, SIZE) &&
		   !fineibt_jit_register(b, SIZE)))
		return fi_check_exit();
	bc = copy_at(blo);
	if (!CHECK("jit_unreg_copies", copy_at(alo) && bc && bc->key))
		return fi_check_exit();
	/* B's heap record (registered after A: first in the list) claims A. */
	bheap = (struct fi_module *)bc->key;
	bheap->text_lo = alo;
	bheap->text_hi = alo + SIZE;

	CHECK("jit_unreg_forged_list_ok", fineibt_jit_unregister(a) == 0);
	CHECK("jit_unreg_withdraws_the_region_asked", !copy_at(alo) &&
	      !fi_rt_module_at(alo));
	CHECK("jit_unreg_keeps_the_other", copy_at(blo) == bc &&
	      fi_rt_module_at(blo) == bc);
	CHECK("jit_unreg_twice", fineibt_jit_unregister(a) == -ENOENT);
	CHECK("jit_unreg_other_still_unregisters", fineibt_jit_unregister(b) == 0 &&
	      !copy_at(blo));
	return fi_check_exit();
}
