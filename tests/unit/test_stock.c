/* SPDX-License-Identifier: MIT */
/*
 * Stock kCFI sequences (insn.h, docs/compat.md "Stock kCFI modules"):
 * clang-22's -fsanitize=kcfi call site through each of the 16 registers
 * (call and tail call, the SIB form of rsp/r12) and its preamble, matched
 * and rewritten (rehash, load -15 / -9, off); near misses refused; the
 * typed veneer's bytes in kCFI and FineIBT form.
 *
 * The site bytes are spelled out here from the x86 encoding (REX.R for
 * %r10d, REX.B for r8..r15, ModRM mod 01 reg 010, SIB 24 for rsp/r12),
 * independently of insn.c; compat_stock.sh runs the same matcher on what
 * clang-22 itself emitted.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "insn.h"

#define H	0xdeadbeefu

/* The stock site for @reg with the hash load at -@load; its length. */
static size_t site(uint8_t *p, int reg, int load, bool jmp)
{
	size_t n = 0;

	p[n++] = 0x41, p[n++] = 0xba;			/* movl $-H, %r10d */
	p[n++] = (uint8_t)-H, p[n++] = (uint8_t)(-H >> 8);
	p[n++] = (uint8_t)(-H >> 16), p[n++] = (uint8_t)(-H >> 24);
	p[n++] = reg >= 8 ? 0x45 : 0x44;		/* addl d8(%reg), %r10d */
	p[n++] = 0x03;
	p[n++] = (uint8_t)(0x50 | (reg & 7));
	if ((reg & 7) == 4)
		p[n++] = 0x24;				/* SIB: base only */
	p[n++] = (uint8_t)-load;
	p[n++] = 0x74, p[n++] = 0x02;			/* je .+2 */
	p[n++] = 0x0f, p[n++] = 0x0b;			/* ud2 */
	if (reg >= 8)
		p[n++] = 0x41;
	p[n++] = 0xff;
	p[n++] = (uint8_t)((jmp ? 0xe0 : 0xd0) | (reg & 7));
	return n;
}

static void test_sites(void)
{
	for (int reg = 0; reg < 16; reg++) {
		for (int jmp = 0; jmp < 2; jmp++) {
			uint8_t p[32], want[32];
			struct fi_stock_site s;
			size_t n = site(p, reg, 4, jmp), ud = (reg & 7) == 4 ? 13 : 12;
			char name[96];
			bool ok;

			snprintf(name, sizeof(name), "stock site r%d%s: matched", reg,
				 jmp ? " jmp" : "");
			ok = fi_match_stock_site(p + ud, ud, n - ud, &s);
			if (!EXPECT(name, ok && s.hash == H && s.reg == reg &&
				    s.load == 4 && s.ud == ud && s.len == n &&
				    s.jmp == (bool)jmp && !s.off))
				continue;
			/* rehash to 0x01020304 and load -9: only imm and d8 change */
			snprintf(name, sizeof(name), "stock site r%d%s: written -9",
				 reg, jmp ? " jmp" : "");
			memcpy(want, p, n);
			want[2] = 0xfc, want[3] = 0xfc, want[4] = 0xfd, want[5] = 0xfe;
			want[ud - 3] = 0xf7;
			EXPECT(name, !fi_stock_site_write(p, &s, 0x01020304u,
							  FI_STOCK_LOAD_FINEIBT, false) &&
			       !memcmp(p, want, n));
			snprintf(name, sizeof(name), "stock site r%d%s: -9 matched back",
				 reg, jmp ? " jmp" : "");
			EXPECT(name, fi_match_stock_site(p + ud, ud, n - ud, &s) &&
			       s.load == 9 && s.hash == 0x01020304u);
			/* off: eb to the call, the rest as it was */
			snprintf(name, sizeof(name), "stock site r%d%s: off", reg,
				 jmp ? " jmp" : "");
			want[0] = 0xeb, want[1] = (uint8_t)ud;
			want[ud - 3] = 0xf1;
			EXPECT(name, !fi_stock_site_write(p, &s, 0x01020304u,
							  FI_STOCK_LOAD_KCFI, true) &&
			       !memcmp(p, want, n) &&
			       fi_match_stock_site(p + ud, ud, n - ud, &s) && s.off &&
			       s.load == 15);
		}
	}
}

static void test_misses(void)
{
	uint8_t p[32], q[32];
	struct fi_stock_site s;
	size_t n = site(p, 0, 4, false);

	memcpy(q, p, n);
	q[n - 1] = 0xd1;		/* call *%rcx after a check of %rax */
	CHECK("stock site: call through another register refused",
	      !fi_match_stock_site(q + 12, 12, n - 12, &s));
	memcpy(q, p, n);
	q[10] = 0x75;			/* jne instead of je */
	CHECK("stock site: jne refused", !fi_match_stock_site(q + 12, 12, n - 12, &s));
	memcpy(q, p, n);
	q[9] = 0xf0;			/* load -16: no layout reads there */
	CHECK("stock site: an unknown load refused",
	      !fi_match_stock_site(q + 12, 12, n - 12, &s));
	memcpy(q, p, n);
	q[1] = 0xbb;			/* movl to %r11d */
	CHECK("stock site: movl to another register refused",
	      !fi_match_stock_site(q + 12, 12, n - 12, &s));
	CHECK("stock site: too few bytes after the ud2 refused",
	      !fi_match_stock_site(p + 12, 12, 3, &s));
	CHECK("stock site: too few bytes before it refused",
	      !fi_match_stock_site(p + 12, 11, n - 12, &s));
	n = site(p, 12, 4, false);	/* SIB form seen one byte short */
	CHECK("stock site: r12 without its SIB byte refused",
	      !fi_match_stock_site(p + 12, 12, n - 12, &s));
	CHECK("stock site: a write with an unknown load refused",
	      fi_stock_site_write(p, &s, 1, 16, false) < 0);
	/* fineibt-cc's own site (through the thunk) is not a stock one */
	{
		static const uint8_t ours[] = {
			0x41, 0xba, 0x78, 0x56, 0x34, 0x12, 0x45, 0x03, 0x53, 0xf1,
			0x74, 0x02, 0x0f, 0x0b, 0x2e, 0xe8, 0, 0, 0, 0,
		};
		CHECK("stock site: fineibt-cc's thunk site refused",
		      !fi_match_stock_site(ours + 12, 12, 8, &s));
	}
}

static void test_preamble(void)
{
	uint8_t p[16];
	uint32_t hash = 0;
	int arity = -1;

	memset(p, 0x90, 11);
	p[11] = 0xba;				/* movl $H, %edx: arity 2 */
	p[12] = (uint8_t)H, p[13] = (uint8_t)(H >> 8);
	p[14] = (uint8_t)(H >> 16), p[15] = (uint8_t)(H >> 24);
	CHECK("stock preamble: matched", fi_match_stock_preamble(p, &hash, &arity) &&
	      hash == H && arity == 2);
	p[3] = 0xcc;
	CHECK("stock preamble: padding not all nops refused",
	      !fi_match_stock_preamble(p, NULL, NULL));
	p[3] = 0x90, p[11] = 0xc0;
	CHECK("stock preamble: no movl refused", !fi_match_stock_preamble(p, NULL, NULL));
}

static void test_veneer(void)
{
	static const uint8_t kcfi[20] = {
		0xb8, 0xef, 0xbe, 0xad, 0xde,		/* movl $H, %eax */
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0xf3, 0x0f, 0x1e, 0xfa,			/* V: endbr64 */
	};
	static const uint8_t fine[20] = {
		0xf3, 0x0f, 0x1e, 0xfa,			/* endbr64 */
		0x41, 0x81, 0xea, 0xef, 0xbe, 0xad, 0xde, /* subl $H, %r10d */
		0x75, 0xf9, 0x0f, 0x1f, 0x00,		/* jne 6; nopl */
		0xf3, 0x0f, 0x1e, 0xfa,			/* V: endbr64 */
	};
	static const uint8_t jmp[6] = { 0xff, 0x25, 0x06, 0, 0, 0 };
	const uint64_t fn = 0x00007f1234567890ULL;
	uint8_t slot[FI_FVEN_SLOT];
	uint64_t f = 0;
	uint32_t h = 0;

	CHECK("typed veneer kcfi: emitted",
	      !fi_emit_typed_veneer(slot, fn, H, 0, false, FI_SET_V4));
	CHECK("typed veneer kcfi: preamble and ENDBR", !memcmp(slot, kcfi, 20));
	CHECK("typed veneer kcfi: jmp *F", !memcmp(slot + 20, jmp, 6) &&
	      !memcmp(slot + 32, &fn, 8));
	CHECK("typed veneer kcfi: matched back",
	      fi_match_typed_veneer(slot, &f, &h) && f == fn && h == H);
	CHECK("typed veneer fineibt: emitted",
	      !fi_emit_typed_veneer(slot, fn, H, 0, true, FI_SET_V4));
	CHECK("typed veneer fineibt: preamble and ENDBR", !memcmp(slot, fine, 20));
	CHECK("typed veneer fineibt: matched back",
	      fi_match_typed_veneer(slot, &f, &h) && f == fn && h == H);
	CHECK("typed veneer v6.18: poison at V",
	      !fi_emit_typed_veneer(slot, fn, H, 0, true, FI_SET_V618) &&
	      slot[16] == 0x0f && slot[17] == 0x1f && slot[18] == 0x40 &&
	      slot[19] == 0xd6);
	fi_emit_foreign_veneer(slot, fn);
	CHECK("typed veneer: a dlsym veneer is not one",
	      !fi_match_typed_veneer(slot, NULL, NULL));
	CHECK("typed veneer: a bad arity refused",
	      fi_emit_typed_veneer(slot, fn, H, 8, false, FI_SET_V4) < 0);
}

int main(void)
{
	test_sites();
	test_misses();
	test_preamble();
	test_veneer();
	return fi_check_exit();
}
