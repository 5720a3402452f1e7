/* SPDX-License-Identifier: MIT */
/*
 * The PLT entries of src/seq/insn.c (docs/protection.md, "A writable GOT:
 * direct PLT entries"): the matchers against the lazy PLTs lld and GNU ld
 * write (bytes as their objdump shows them, plain and IBT), the direct
 * forms checked byte by byte against their layout in insn.h, and the
 * verification of a rewritten copy (src/interpose/plt.c, fi_plt_copy_ok).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "insn.h"
#include "plt.h"

#define PLT0	0x401020ULL
#define GOT	0x404000ULL

/* d32 of an instruction of @len bytes at @ip reaching @to. */
static void put_rel(uint8_t *p, uint64_t ip, int len, uint64_t to)
{
	int32_t v = (int32_t)(to - (ip + (uint64_t)len));

	memcpy(p + len - 4, &v, 4);
}

static void test_header(void)
{
	uint8_t h[16] = { 0xff, 0x35, 0, 0, 0, 0, 0xff, 0x25, 0, 0, 0, 0,
			  0x0f, 0x1f, 0x40, 0x00 };
	uint8_t b[16] = { 0xff, 0x35, 0, 0, 0, 0, 0xf2, 0xff, 0x25, 0, 0, 0, 0,
			  0x0f, 0x1f, 0x00 };

	put_rel(h, PLT0, 6, GOT + 8);
	put_rel(h + 6, PLT0 + 6, 6, GOT + 16);
	CHECK("plt0: lld/GNU ld header names its GOT", fi_match_plt0(h, PLT0, GOT));
	CHECK("plt0: another GOT is refused", !fi_match_plt0(h, PLT0, GOT + 8));
	put_rel(b, PLT0, 6, GOT + 8);
	put_rel(b + 6, PLT0 + 6, 7, GOT + 16);
	CHECK("plt0: GNU ld bnd header", fi_match_plt0(b, PLT0, GOT));
}

static void test_lazy(void)
{
	uint64_t e = PLT0 + 16 * 3, slot, plt0;
	uint8_t p[16] = { 0xff, 0x25, 0, 0, 0, 0, 0x68, 2, 0, 0, 0, 0xe9, 0, 0, 0, 0 };
	uint8_t i[16] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x68, 2, 0, 0, 0, 0xe9, 0, 0, 0, 0,
			  0x66, 0x90 };
	uint8_t g[16] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x68, 2, 0, 0, 0, 0xf2, 0xe9, 0, 0,
			  0, 0, 0x90 };
	uint32_t k;

	put_rel(p, e, 6, GOT + 24 + 16);
	put_rel(p + 11, e + 11, 5, PLT0);
	CHECK("lazy: jmp *slot; push k; jmp plt0 decoded",
	      fi_match_plt_lazy(p, e, false, &slot, &k, &plt0) &&
	      slot == GOT + 40 && k == 2 && plt0 == PLT0);
	CHECK("lazy: not an IBT entry", !fi_match_plt_lazy(p, e, true, &slot, &k, &plt0));
	p[0] = 0xf2;
	CHECK("lazy: a bnd jmp *slot is another layout, refused",
	      !fi_match_plt_lazy(p, e, false, &slot, &k, &plt0));
	put_rel(i + 9, e + 9, 5, PLT0);
	CHECK("lazy IBT (lld): endbr; push k; jmp plt0",
	      fi_match_plt_lazy(i, e, true, &slot, &k, &plt0) && !slot &&
	      k == 2 && plt0 == PLT0);
	put_rel(g + 9, e + 9, 6, PLT0);
	CHECK("lazy IBT (GNU ld): endbr; push k; bnd jmp plt0",
	      fi_match_plt_lazy(g, e, true, &slot, &k, &plt0) && k == 2 &&
	      plt0 == PLT0);
}

static void test_sec(void)
{
	uint64_t s = PLT0 + 0x100, slot;
	uint8_t l[16] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0, 0, 0, 0,
			  0x66, 0x0f, 0x1f, 0x44, 0, 0 };
	uint8_t g[16] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0, 0, 0, 0,
			  0x0f, 0x1f, 0x44, 0, 0 };

	put_rel(l + 4, s + 4, 6, GOT + 32);
	CHECK("plt.sec (lld): endbr; jmp *slot",
	      fi_match_plt_sec(l, s, &slot) && slot == GOT + 32);
	put_rel(g + 4, s + 4, 7, GOT + 32);
	CHECK("plt.sec (GNU ld): endbr; bnd jmp *slot",
	      fi_match_plt_sec(g, s, &slot) && slot == GOT + 32);
	g[0] = 0x90;
	CHECK("plt.sec: no endbr, refused", !fi_match_plt_sec(g, s, &slot));
}

static void test_direct(void)
{
	static const uint8_t want[16] = {
		0x49, 0xbb, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		0x41, 0xff, 0xe3, 0xcc, 0xcc, 0xcc,
	};
	uint8_t d[16], s[16];
	uint64_t t, lazy, at = PLT0 + 0x200;
	int32_t rel;

	fi_emit_plt_direct(d, 0x1122334455667788ULL);
	CHECK("direct: movabs $t,%r11; jmp *%r11; int3 x3", !memcmp(d, want, 16));
	CHECK("direct: matched back", fi_match_plt_direct(d, &t) &&
	      t == 0x1122334455667788ULL);
	CHECK("direct: a lazy entry is not direct",
	      !fi_match_plt_direct((const uint8_t *)"\xff\x25\0\0\0\0\x68\0\0\0\0\xe9\0\0\0\0", &t));
	CHECK("sec direct: emitted", fi_emit_plt_sec_direct(s, at, PLT0 + 16));
	memcpy(&rel, s + 5, 4);
	CHECK("sec direct: endbr64; jmp rel32 to its lazy entry; int3 x7",
	      s[0] == 0xf3 && s[1] == 0x0f && s[2] == 0x1e && s[3] == 0xfa &&
	      s[4] == 0xe9 && at + 9 + (uint64_t)(int64_t)rel == PLT0 + 16 &&
	      s[9] == 0xcc && s[15] == 0xcc);
	CHECK("sec direct: matched back",
	      fi_match_plt_sec_direct(s, at, &lazy) && lazy == PLT0 + 16);
	CHECK("sec direct: out of rel32 reach refused",
	      !fi_emit_plt_sec_direct(s, at, 0x7f0000000000ULL));
}

/*
 * A fake PLT page at run-time LO: PLT0 at +0x20, 3 lazy entries (slot
 * order pushed reversed, as GNU ld's IRELATIVE entries may be), code
 * after them; IBT: lazy entries with ENDBR and a .plt.sec at +0x80.
 */
#define LO	0x401000ULL
#define P0	(LO + 0x20)
#define SEC	(LO + 0x80)
#define TGT	0x7f0000001230ULL

static const uint64_t xr[2][2] = {
	{ LO, LO + 0x1000 }, { 0x7f0000000000ULL, 0x7f0000100000ULL },
};

static void fake_plt(uint8_t *t, bool ibt)
{
	memset(t, 0x90, 256);
	for (int j = 0; j < 3; j++) {
		uint64_t e = P0 + 16 * (j + 1), s = SEC + 16 * j;
		uint8_t *p = t + (e - LO), *q = t + (s - LO);
		uint32_t k = 2 - j;

		if (ibt) {
			memcpy(p, "\xf3\x0f\x1e\xfa\x68", 5);
			memcpy(p + 5, &k, 4);
			p[9] = 0xe9;
			put_rel(p + 9, e + 9, 5, P0);
			memcpy(q, "\xf3\x0f\x1e\xfa\xff\x25", 6);
			put_rel(q + 4, s + 4, 6, GOT + 24 + 8 * k);
		} else {
			p[0] = 0xff;
			p[1] = 0x25;
			put_rel(p, e, 6, GOT + 24 + 8 * k);
			p[6] = 0x68;
			memcpy(p + 7, &k, 4);
			p[11] = 0xe9;
			put_rel(p + 11, e + 11, 5, P0);
		}
	}
}

static bool ok(const uint8_t *t, const uint8_t *c, size_t nfx, bool ibt)
{
	struct fi_plt_layout l = { P0, ibt ? SEC : 0, 3 };

	return fi_plt_copy_ok(&l, t, c, LO, 256, nfx, xr, 2);
}

static void test_copy_ok(void)
{
	uint8_t t[256], c[256];

	fake_plt(t, false);
	memcpy(c, t, 256);
	fi_emit_plt_direct(c + 0x40, TGT);
	CHECK("copy: entry 1 made direct to code: accepted", ok(t, c, 1, false));
	CHECK("copy: the fix count must match", !ok(t, c, 2, false));
	fi_emit_plt_direct(c + 0x30, 0x500000);
	CHECK("copy: a direct target outside code refused", !ok(t, c, 2, false));
	memcpy(c, t, 256);
	fi_emit_plt_direct(c + 0x60, TGT);
	CHECK("copy: a direct jump over code after the PLT (a forged fix "
	      "list) refused", !ok(t, c, 1, false));
	memcpy(c, t, 256);
	fi_emit_plt_direct(c + 0x20, TGT);
	CHECK("copy: PLT0 made a jump refused", !ok(t, c, 1, false));
	memcpy(c, t, 256);
	c[0x95] ^= 1;
	CHECK("copy: a byte outside the entries refused", !ok(t, c, 1, false));
	memcpy(c, t, 256);
	fi_emit_plt_direct(c + 0x40, TGT);
	c[0x4f] = 0x90;
	CHECK("copy: a direct entry with a changed tail refused", !ok(t, c, 1, false));

	fake_plt(t, true);
	memcpy(c, t, 256);
	fi_emit_plt_direct(c + 0x40, TGT);
	fi_emit_plt_sec_direct(c + (SEC + 16 - LO), SEC + 16, P0 + 32);
	CHECK("copy IBT: .plt.sec 1 to lazy entry 1, made direct: accepted",
	      ok(t, c, 2, true));
	fi_emit_plt_sec_direct(c + (SEC + 16 - LO), SEC + 16, P0 + 48);
	CHECK("copy IBT: .plt.sec 1 to another lazy entry refused",
	      !ok(t, c, 2, true));
}

int main(void)
{
	test_header();
	test_lazy();
	test_sec();
	test_direct();
	test_copy_ok();
	return fi_check_exit();
}
