// SPDX-License-Identifier: MIT
/*
 * The coarse check (docs/compat.md, "Calls without a kCFI check"): the
 * matcher of the checking thunks (insn.c) against the bytes the x86
 * encoding gives for each register's thunk (the assembled ones are
 * matched in tests/e2e/compat_coarse.sh, through `fineibt inspect`), and
 * the known-entry lookup (rtcoarse.c) that coarse.S mirrors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "coarse.h"
#include "insn.h"

/* The thunk of @reg as thunks.S assembles it (mov or lea); its length. */
static size_t thunk(uint8_t *p, int reg, bool lea, int32_t rel)
{
	uint8_t sr = reg == 11 ? 2 : 3;
	uint32_t imm = (uint32_t)reg * FI_COARSE_STRIDE;
	size_t n = 0, jz;

	if (reg == 11) {
		p[n++] = 0x41;	/* push %r10 */
		p[n++] = 0x52;
	}
	p[n++] = 0x4c;
	p[n++] = lea ? 0x8d : 0x8b;
	p[n++] = (uint8_t)(0x05 | sr << 3);
	memcpy(p + n, &rel, 4);
	n += 4;
	p[n++] = 0x4d;
	p[n++] = 0x85;
	p[n++] = (uint8_t)(0xc0 | sr << 3 | sr);
	p[n++] = 0x74;
	jz = n++;
	p[n++] = 0x49;
	if (imm < 128) {
		p[n++] = 0x83;
		p[n++] = (uint8_t)(0xc0 | sr);
		p[n++] = (uint8_t)imm;
	} else {
		p[n++] = 0x81;
		p[n++] = (uint8_t)(0xc0 | sr);
		memcpy(p + n, &imm, 4);
		n += 4;
	}
	p[n++] = 0x41;
	p[n++] = 0xff;
	p[n++] = (uint8_t)(0xe0 | sr);
	p[jz] = (uint8_t)(n - jz - 1);
	if (reg == 11) {
		p[n++] = 0x41;	/* pop %r10 */
		p[n++] = 0x5a;
	}
	if (reg >= 8)
		p[n++] = 0x41;
	p[n++] = 0xff;
	p[n++] = (uint8_t)(0xe0 | (reg & 7));
	p[n++] = 0xcc;
	return n;
}

static void check_thunks(void)
{
	uint8_t p[64];
	uint64_t slot;
	bool all = true, none = true;

	for (int r = 0; r < 16; r++) {
		size_t n = thunk(p, r, false, 0x100);

		all &= EXPECT("coarse-thunk", fi_match_coarse_thunk(p, n, 0x1000, r, &slot) &&
			      slot == 0x1000 + 7 + 2 * (r == 11) + 0x100);
		all &= EXPECT("coarse-thunk-lea", fi_match_coarse_thunk(
				      p, thunk(p, r, true, 0x100), 0x1000, r, &slot) && !slot);
		/* another register's check, or cut short */
		thunk(p, r, false, 0x100);
		none &= EXPECT("coarse-thunk-other", !fi_match_coarse_thunk(
				       p, n, 0x1000, (r + 1) % 16, NULL));
		none &= EXPECT("coarse-thunk-short", !fi_match_coarse_thunk(
				       p, n - 2, 0x1000, r, NULL));
	}
	CHECK("coarse-thunk-every-register", all);
	CHECK("coarse-thunk-wrong-refused", none);
	/* the plain thunk: jmp *%rax; int3 */
	memset(p, 0xcc, sizeof(p));
	p[0] = 0xff;
	p[1] = 0xe0;
	CHECK("coarse-thunk-plain-refused", !fi_match_coarse_thunk(p, sizeof(p), 0x1000, 0, NULL));
	/* the imm of the register's stride, nothing else */
	thunk(p, 3, false, 0);
	p[15]++;	/* imm32 of add */
	CHECK("coarse-thunk-stride", !fi_match_coarse_thunk(p, sizeof(p), 0x1000, 3, NULL));
}

static void check_lookup(void)
{
	/* two modules' ranges and the veneer region, sorted, then the sentinel */
	static uint64_t bits1[4], bits2[1];
	struct fi_coarse *t = calloc(1, sizeof(*t) + 4 * sizeof(t->r[0]));

	if (!t)
		return;
	bits1[0] = 1ull << 0 | 1ull << 5;	/* 0x10000, 0x10050 */
	bits1[3] = 1ull << 63;			/* 0x10ff0 */
	bits2[0] = 1ull << 2;			/* 0x50020 */
	t->n = 3;
	t->r[0] = (struct fi_coarse_range){ 0x10000, 0x11000, bits1 };
	t->r[1] = (struct fi_coarse_range){ 0x50000, 0x50040, bits2 };
	t->r[2] = (struct fi_coarse_range){ 0x80000, 0x80000 + FI_FVEN_REGION, NULL };
	t->r[3] = (struct fi_coarse_range){ UINT64_MAX, UINT64_MAX, NULL };
	CHECK("coarse-known-entries", fi_coarse_known(t, 0x10000) &&
	      fi_coarse_known(t, 0x10050) && fi_coarse_known(t, 0x10ff0) &&
	      fi_coarse_known(t, 0x50020));
	CHECK("coarse-known-not-entries", !fi_coarse_known(t, 0x10010) &&
	      !fi_coarse_known(t, 0x10051) && !fi_coarse_known(t, 0x50030) &&
	      !fi_coarse_known(t, 0x103f8));
	CHECK("coarse-known-outside", !fi_coarse_known(t, 0xfff0) &&
	      !fi_coarse_known(t, 0x11000) && !fi_coarse_known(t, 0x50040) &&
	      !fi_coarse_known(t, 0x7fff0) && !fi_coarse_known(t, 0x80000 + FI_FVEN_REGION + 16));
	CHECK("coarse-known-veneers", fi_coarse_known(t, 0x80000 + FI_FVEN_ENTRY) &&
	      fi_coarse_known(t, 0x80000 + 5 * FI_FVEN_SLOT + FI_FVEN_ENTRY) &&
	      !fi_coarse_known(t, 0x80000) &&
	      !fi_coarse_known(t, 0x80000 + FI_FVEN_SLOT + FI_FVEN_ENTRY + 16));
	CHECK("coarse-known-no-table", fi_coarse_known(NULL, 0x1234567));
	free(t);
}

int main(void)
{
	check_thunks();
	check_lookup();
	return fi_check_exit();
}
