/* SPDX-License-Identifier: MIT */
/*
 * The one reader of a loaded module's dynamic section (src/elf/dyntab.h)
 * on crafted sections: a d_ptr biased once (link-time values rebased,
 * values the loader relocated in place kept), a d_val never; the last of
 * two equal tags; a tag absent, or present but not asked for, reads 0
 * and sets no bit (a SONAME at offset 0 is present); more DT_NEEDED than
 * the array holds: the first ones kept in order, all counted; the walk
 * stops at DT_NULL or after @max entries, whichever comes first.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>

#include "check.h"
#include "dyntab.h"

#define BIAS	0x7f0000000000ULL

static void test_values(void)
{
	const ElfW(Dyn) dyn[] = {
		{ DT_SYMTAB, { 0x1000 } },		/* link-time: rebased */
		{ DT_STRTAB, { BIAS + 0x2000 } },	/* relocated in place */
		{ DT_RELASZ, { 0x30 } },		/* a size: never rebased */
		{ DT_SYMTAB, { 0x1800 } },		/* the second wins */
		{ DT_SONAME, { 0 } },			/* offset 0: present */
		{ DT_VERSYM, { 0x3000 } },		/* not asked for */
		{ DT_FLAGS, { DF_BIND_NOW } },		/* not asked for */
		{ DT_CHECKSUM, { 0x1234 } },		/* no slot */
		{ DT_NULL, { 0 } },
		{ DT_GNU_HASH, { 0x4000 } },		/* past DT_NULL */
	};
	struct fi_dyntab t;

	fi_dyn_read(dyn, sizeof(dyn) / sizeof(dyn[0]), BIAS,
		    FI_DT(SYMTAB) | FI_DT(STRTAB) | FI_DT(RELASZ) |
		    FI_DT(SONAME) | FI_DT(GNU_HASH), &t);
	CHECK("dyntab_ptr_rebased_once",
	      fi_dyn_get(&t, FI_DT_STRTAB) == BIAS + 0x2000);
	CHECK("dyntab_last_of_two", fi_dyn_get(&t, FI_DT_SYMTAB) == BIAS + 0x1800);
	CHECK("dyntab_val_as_is", fi_dyn_get(&t, FI_DT_RELASZ) == 0x30);
	CHECK("dyntab_zero_present", (t.has & FI_DT(SONAME)) &&
	      fi_dyn_get(&t, FI_DT_SONAME) == 0);
	CHECK("dyntab_not_asked", !(t.has & FI_DT(VERSYM)) &&
	      !fi_dyn_get(&t, FI_DT_VERSYM));
	CHECK("dyntab_stops_at_null", !(t.has & FI_DT(GNU_HASH)) &&
	      !fi_dyn_get(&t, FI_DT_GNU_HASH));
	CHECK("dyntab_no_needed_unasked", t.nneeded == 0);
	CHECK("dyntab_bits_exact", t.has == (FI_DT(SYMTAB) | FI_DT(STRTAB) |
					     FI_DT(RELASZ) | FI_DT(SONAME)));
	/* Every bit asked: an OS-range tag without a slot sets none. */
	fi_dyn_read(dyn, sizeof(dyn) / sizeof(dyn[0]), BIAS, ~0ull, &t);
	CHECK("dyntab_no_slot", !(t.has & ~((1ull << FI_DT_NSLOTS) - 1)) &&
	      fi_dyn_get(&t, FI_DT_VERSYM) == BIAS + 0x3000 &&
	      (t.has & (1ull << DT_FLAGS)) && t.v[DT_FLAGS] == DF_BIND_NOW);
}

static void test_needed(void)
{
	ElfW(Dyn) dyn[FI_DT_NEEDED_MAX + 4];
	size_t n = 0;
	bool order = true;
	struct fi_dyntab t;

	for (; n < FI_DT_NEEDED_MAX + 2; n++) {
		dyn[n].d_tag = DT_NEEDED;
		dyn[n].d_un.d_val = 10 * (n + 1);
	}
	dyn[n].d_tag = DT_STRTAB;
	dyn[n++].d_un.d_ptr = 0x500;
	dyn[n].d_tag = DT_NULL;
	dyn[n++].d_un.d_val = 0;
	fi_dyn_read(dyn, n, BIAS, FI_DT(NEEDED) | FI_DT(STRTAB), &t);
	for (size_t i = 0; i < FI_DT_NEEDED_MAX; i++)
		order &= t.needed[i] == 10 * (i + 1);
	CHECK("dyntab_needed_counted", t.nneeded == FI_DT_NEEDED_MAX + 2);
	CHECK("dyntab_needed_first_kept", order);
	CHECK("dyntab_needed_then_others",
	      fi_dyn_get(&t, FI_DT_STRTAB) == BIAS + 0x500);

	/* @max cuts the walk before DT_NULL (a PT_DYNAMIC's size). */
	fi_dyn_read(dyn, 3, BIAS, FI_DT(NEEDED) | FI_DT(STRTAB), &t);
	CHECK("dyntab_max_bounds", t.nneeded == 3 && !t.has);
	/* A reused table starts empty; no section: nothing. */
	fi_dyn_read(NULL, SIZE_MAX, BIAS, FI_DT(NEEDED) | FI_DT(STRTAB), &t);
	CHECK("dyntab_none", t.nneeded == 0 && !t.has &&
	      !fi_dyn_get(&t, FI_DT_STRTAB));
}

/* A bias of 0 (an executable at its link-time address): nothing moves. */
static void test_no_bias(void)
{
	const ElfW(Dyn) dyn[] = {
		{ DT_JMPREL, { 0x401000 } },
		{ DT_PREINIT_ARRAYSZ, { 16 } },
		{ DT_NULL, { 0 } },
	};
	struct fi_dyntab t;

	fi_dyn_read(dyn, SIZE_MAX, 0, FI_DT(JMPREL) | FI_DT(PREINIT_ARRAYSZ), &t);
	CHECK("dyntab_exec_unbiased", fi_dyn_get(&t, FI_DT_JMPREL) == 0x401000 &&
	      fi_dyn_get(&t, FI_DT_PREINIT_ARRAYSZ) == 16);
}

int main(void)
{
	test_values();
	test_needed();
	test_no_bias();
	return fi_check_exit();
}
