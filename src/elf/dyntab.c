// SPDX-License-Identifier: MIT
/* A dynamic section's tags in one walk (dyntab.h). */
#include "dyntab.h"

_Static_assert(FI_DT_NSLOTS < 64, "a slot per bit of the mask, and one spare");
_Static_assert(DT_VERSYM == 0x6ffffff0 && DT_VERNEEDNUM == DT_VERSYM + 15,
	       "the sixteen OS-range tags from DT_VERSYM up");

/* The slots whose entries hold an address (d_ptr), rebased once. */
#define FI_DT_PTRS							\
	((1ull << DT_PLTGOT) | (1ull << DT_HASH) | (1ull << DT_STRTAB) |	\
	 (1ull << DT_SYMTAB) | (1ull << DT_RELA) | (1ull << DT_INIT) |	\
	 (1ull << DT_FINI) | (1ull << DT_REL) | (1ull << DT_DEBUG) |	\
	 (1ull << DT_JMPREL) | (1ull << DT_INIT_ARRAY) |		\
	 (1ull << DT_FINI_ARRAY) | (1ull << DT_PREINIT_ARRAY) |		\
	 (1ull << DT_SYMTAB_SHNDX) | (1ull << DT_RELR) |		\
	 FI_DT(GNU_HASH) | FI_DT(VERSYM) | FI_DT(VERDEF))

/* A tag's slot; 63 (never asked for) for a tag without one. */
static inline unsigned int fi_dt_slot(ElfW(Sxword) tag)
{
	ElfW(Xword) u = (ElfW(Xword))tag;

	if (u < FI_DT_STD)
		return (unsigned int)u;
	if (u - DT_VERSYM < 16)
		return FI_DT_VERSYM + (unsigned int)(u - DT_VERSYM);
	return u == DT_GNU_HASH ? FI_DT_GNU_HASH : 63;
}

/*
 * Most entries are tags nobody asked for: for a generic one, a compare
 * and a bit test. DT_NULL (bit 0, always "asked") and DT_NEEDED leave
 * the common path by one compare.
 */
void fi_dyn_read(const ElfW(Dyn) *dyn, size_t max, uintptr_t bias,
		 uint64_t want, struct fi_dyntab *t)
{
	want = (want | 1) & ~(1ull << 63);
	t->has = 0;
	t->nneeded = 0;
	for (size_t n = dyn ? max : 0; n; n--, dyn++) {
		unsigned int s = fi_dt_slot(dyn->d_tag);
		uintptr_t v;

		if (!((want >> s) & 1))
			continue;
		v = dyn->d_un.d_val;
		if (s <= FI_DT_NEEDED) {
			if (s == DT_NULL)
				break;
			if (t->nneeded < FI_DT_NEEDED_MAX)
				t->needed[t->nneeded] = v;
			t->nneeded++;
			continue;
		}
		t->v[s] = (FI_DT_PTRS >> s) & 1 ? fi_dyn_ptr(bias, v) : v;
		t->has |= 1ull << s;
	}
}
