/* SPDX-License-Identifier: MIT */
/*
 * Byte-exact tests of every template and encoder of src/seq/insn.c, and of its
 * matchers and #UD decoder.
 *
 * The expected bytes below are written out again, from the tables of
 * docs/sequences.md, on purpose: this file is the independent statement
 * of the sequences (the one place, with insn.c, where they are spelled).
 * The oracle (tests/e2e/insn_oracle.sh) checks them a third way, through
 * LLVM's disassembler.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "insn.h"

#define B4(v)	(uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), \
		(uint8_t)((v) >> 24)
#define PH	0x12345678u		/* the templates' placeholder hash */
#define CANARY	0xcc
#define BUFSZ	64

static const uint32_t hashes[] = {
	0x12345678, 0x00000000, 0xffffffff, 0xdeadbeef, 0x80000000, 0x00000001,
	0xfa1e0ff3, /* endbr64 itself: the encoders must not care */
};
#define NHASH (sizeof(hashes) / sizeof(hashes[0]))

static void hexdump(const char *what, const uint8_t *p, size_t n)
{
	printf("  %s:", what);
	for (size_t i = 0; i < n; i++)
		printf(" %02x", p[i]);
	printf("\n");
}

/* Quiet byte comparison; on mismatch, both sides are shown. */
static bool same_bytes(const char *name, const uint8_t *got, size_t got_len,
		       const uint8_t *want, size_t want_len)
{
	bool ok = got_len == want_len && !memcmp(got, want, want_len);

	if (!EXPECT(name, ok)) {
		hexdump("got ", got, got_len);
		hexdump("want", want, want_len);
	}
	return ok;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* --------------------------------------------------------- the tables */

/* docs/sequences.md, with the placeholder hash 0x12345678. */
static const uint8_t x_kcfi_preamble[] = {
	0xb8, B4(PH), 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90,
};
static const uint8_t x_kcfi_caller[] = {
	0x41, 0xba, B4(PH), 0x45, 0x03, 0x53, 0xf1, 0x74, 0x02, 0x0f, 0x0b,
	0x2e, 0xe8, 0, 0, 0, 0,
};
static const uint8_t x_kcfi_caller_jmp[] = {
	0x41, 0xba, B4(PH), 0x45, 0x03, 0x53, 0xf1, 0x74, 0x02, 0x0f, 0x0b,
	0x2e, 0xe9, 0, 0, 0, 0,
};
static const uint8_t x_fineibt_preamble[] = {
	0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x81, 0xea, B4(PH), 0x75, 0xf9,
	0x0f, 0x1f, 0x00,
};
static const uint8_t x_fineibt_caller[] = {
	0x41, 0xba, B4(PH), 0x4d, 0x8d, 0x5b, 0xf0, 0x0f, 0x1f, 0x40, 0x00,
};
static const uint8_t x_indirect_call[] = { 0x41, 0xff, 0xd3, 0x0f, 0x1f, 0x00 };
static const uint8_t x_indirect_jmp[] = { 0x41, 0xff, 0xe3, 0x0f, 0x1f, 0x00 };
static const uint8_t x_paranoid_call[] = {
	0x41, 0xba, B4(PH), 0x45, 0x3b, 0x53, 0xf7, 0x4d, 0x8d, 0x5b, 0xf0,
	0x75, 0xfd, 0x41, 0xff, 0xd3, 0x90,
};
static const uint8_t x_paranoid_jmp[] = {
	0x41, 0xba, B4(PH), 0x45, 0x3b, 0x53, 0xf7, 0x4d, 0x8d, 0x5b, 0xf0,
	0x75, 0xfd, 0x41, 0xff, 0xe3, 0x90,
};
static const uint8_t x_bhi_call[] = { 0xe8, 0, 0, 0, 0 };
static const uint8_t x_arity1_inline[] = {
	0x49, 0x0f, 0x45, 0xfa, 0x75, 0xf5, 0x0f, 0x1f, 0x00,
};
static const uint8_t x_endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
static const uint8_t x_endbr32[] = { 0xf3, 0x0f, 0x1e, 0xfb };
static const uint8_t x_endbr_poison[] = { 0x66, 0x0f, 0x1f, 0x00 };
static const uint8_t x_bhi_magic[] = { 0xf5, 0x0f, 0x1f, 0x00 };
static const uint8_t x_caller_off[] = { 0xeb, 0x0c };
static const uint8_t x_thunk_call[] = { 0x2e, 0xe8, 0, 0, 0, 0 };
static const uint8_t x_thunk_jmp[] = { 0x2e, 0xe9, 0, 0, 0, 0 };
/* Helpers for generated code (not in fi_seq_all). */
static const uint8_t x_call_reg[] = { 0xff, 0xd0 };
static const uint8_t x_jmp_reg[] = { 0xff, 0xe0 };
static const uint8_t x_rex_b[] = { 0x41 };
static const uint8_t x_mov_r11[] = { 0x49, 0x89, 0xc3 };
/* The v6.18 set, userspace form (docs/sequences.md): hash in %r10d. */
static const uint8_t x_v618_preamble[] = {
	0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x81, 0xea, B4(PH),
	0x2e, 0x2e, 0x2e, 0x75, 0x03,
};
static const uint8_t x_v618_poison[] = { 0x0f, 0x1f, 0x40, 0xd6 };
static const uint8_t x_v618_kcfi_caller[] = {
	0x41, 0xba, B4(PH), 0x45, 0x03, 0x53, 0xf1, 0x75, 0x01, 0xa8, 0xd6,
	0x2e, 0xe8, 0, 0, 0, 0,
};
static const uint8_t x_v618_kcfi_caller_jmp[] = {
	0x41, 0xba, B4(PH), 0x45, 0x03, 0x53, 0xf1, 0x75, 0x01, 0xa8, 0xd6,
	0x2e, 0xe9, 0, 0, 0, 0,
};
static const uint8_t x_v618_indirect_call[] = { 0x2e, 0x2e, 0x2e, 0x41, 0xff, 0xd3 };
static const uint8_t x_v618_indirect_jmp[] = { 0x2e, 0x2e, 0x2e, 0x41, 0xff, 0xe3 };
static const uint8_t x_v618_paranoid_call[] = {
	0x41, 0xba, B4(PH), 0x45, 0x3b, 0x53, 0xf7, 0x4d, 0x8d, 0x5b, 0xf0,
	0x75, 0xfd, 0x2e, 0x41, 0xff, 0xd3,
};
static const uint8_t x_v618_paranoid_jmp[] = {
	0x41, 0xba, B4(PH), 0x45, 0x3b, 0x53, 0xf7, 0x4d, 0x8d, 0x5b, 0xf0,
	0x75, 0xfd, 0x2e, 0x41, 0xff, 0xe3,
};
static const uint8_t x_cs[] = { 0x2e };

struct expect_seq {
	const struct fi_seq *seq;
	const char *name;
	const uint8_t *bytes;
	size_t len;
	int hash, ud;
};

#define X(s, nm, h, u) { &fi_seq_##s, nm, x_##s, sizeof(x_##s), h, u }
static const struct expect_seq expected[] = {
	X(kcfi_preamble, "kcfi_preamble", 1, -1),
	X(kcfi_caller, "kcfi_caller", 2, 12),
	X(kcfi_caller_jmp, "kcfi_caller_jmp", 2, 12),
	X(fineibt_preamble, "fineibt_preamble", 7, 6),
	X(fineibt_caller, "fineibt_caller", 2, -1),
	X(indirect_call, "indirect_call", -1, -1),
	X(indirect_jmp, "indirect_jmp", -1, -1),
	X(paranoid_call, "paranoid_call", 2, 0xd),
	X(paranoid_jmp, "paranoid_jmp", 2, 0xd),
	X(bhi_call, "bhi_call", -1, -1),
	X(arity1_inline, "arity1_inline", -1, -1),
	X(endbr64, "endbr64", -1, -1),
	X(endbr32, "endbr32", -1, -1),
	X(endbr_poison, "endbr_poison", -1, -1),
	X(bhi_magic, "bhi_magic", -1, -1),
	X(caller_off, "caller_off", -1, -1),
	X(thunk_call, "thunk_call", -1, -1),
	X(thunk_jmp, "thunk_jmp", -1, -1),
	X(call_reg, "call_reg", -1, -1),
	X(jmp_reg, "jmp_reg", -1, -1),
	X(rex_b, "rex_b", -1, -1),
	X(mov_r11, "mov_r11", -1, -1),
	X(v618_preamble, "v618_preamble", 7, -1),
	X(v618_poison, "v618_poison", -1, 3),
	X(v618_kcfi_caller, "v618_kcfi_caller", 2, 13),
	X(v618_kcfi_caller_jmp, "v618_kcfi_caller_jmp", 2, 13),
	X(v618_indirect_call, "v618_indirect_call", -1, -1),
	X(v618_indirect_jmp, "v618_indirect_jmp", -1, -1),
	X(v618_paranoid_call, "v618_paranoid_call", 2, 0xd),
	X(v618_paranoid_jmp, "v618_paranoid_jmp", 2, 0xd),
	X(cs, "cs", -1, -1),
};
#define NEXPECTED (sizeof(expected) / sizeof(expected[0]))

/* ------------------------------------------------------ the templates */

static void test_offsets(void)
{
	CHECK("offsets: kcfi preamble hash at 1", FI_KCFI_PREAMBLE_HASH == 1);
	CHECK("offsets: kcfi caller -hash at 2, ud2 at 12, call at 14, load -15",
	      FI_KCFI_CALLER_HASH == 2 && FI_KCFI_CALLER_UD == 12 &&
	      FI_KCFI_CALLER_CALL == 14 && FI_KCFI_CALLER_LOAD == 15);
	CHECK("offsets: fineibt preamble hash 7, ud 6, bhi 11",
	      FI_FINEIBT_PREAMBLE_HASH == 7 && FI_FINEIBT_PREAMBLE_UD == 6 &&
	      FI_FINEIBT_PREAMBLE_BHI == 11);
	CHECK("offsets: fineibt caller 14 bytes, hash at 2",
	      FI_FINEIBT_CALLER_SIZE == 14 && FI_FINEIBT_CALLER_HASH == 2);
	CHECK("offsets: paranoid hash 2, load -9, ud 0xd, call 0x10",
	      FI_PARANOID_HASH == 2 && FI_PARANOID_LOAD == 9 &&
	      FI_PARANOID_UD == 0xd && FI_PARANOID_IND == 0x10);
	CHECK("offsets: sizes 16/20, 32-byte BHI slots, arity <= 7",
	      FI_PREAMBLE_SIZE == 16 && FI_CALLSITE_SIZE == 20 &&
	      FI_BHI_SLOT_SIZE == 32 && FI_MAX_ARITY == 7);
	/* The paranoid load reaches the FineIBT preamble's hash at func-9. */
	CHECK("offsets: paranoid load = preamble size - preamble hash",
	      FI_PARANOID_LOAD == FI_PREAMBLE_SIZE - FI_FINEIBT_PREAMBLE_HASH);
	CHECK("offsets: kcfi load = preamble size - kcfi hash",
	      FI_KCFI_CALLER_LOAD == FI_PREAMBLE_SIZE - FI_KCFI_PREAMBLE_HASH);
	CHECK("values: endbr64/32, poison, bhi magic read little-endian",
	      FI_ENDBR64_VAL == get32(x_endbr64) &&
	      FI_ENDBR32_VAL == get32(x_endbr32) &&
	      FI_POISON_VAL == get32(x_endbr_poison) &&
	      FI_BHI_MAGIC_VAL == get32(x_bhi_magic));
}

static void test_templates(void)
{
	for (size_t i = 0; i < NEXPECTED; i++) {
		const struct expect_seq *e = &expected[i];
		const struct fi_seq *s = e->seq;
		char name[96];

		snprintf(name, sizeof(name), "template %s: bytes", e->name);
		if (!CHECK(name, s->len == e->len &&
				 !memcmp(s->bytes, e->bytes, e->len))) {
			hexdump("got ", s->bytes, s->len);
			hexdump("want", e->bytes, e->len);
		}
		snprintf(name, sizeof(name), "template %s: name, hash and ud offsets",
			 e->name);
		CHECK(name, !strcmp(s->name, e->name) && s->hash == e->hash &&
			    s->ud == e->ud);
	}
}

/* Every template in fi_seq_all has an independent expectation here. */
static void test_seq_all(void)
{
	bool ok = true;
	size_t n = 0;

	for (const struct fi_seq *const *s = fi_seq_all; *s; s++, n++) {
		bool found = false;

		for (size_t i = 0; i < NEXPECTED; i++)
			found |= expected[i].seq == *s;
		if (!EXPECT("fi_seq_all: every template is tested here", found))
			printf("  untested template: %s\n", (*s)->name);
		ok &= found;
	}
	CHECK("fi_seq_all: holds at least the 18 sequences of docs/sequences.md", n >= 18);
	for (size_t i = 0; i < 18; i++) {
		bool found = false;

		for (const struct fi_seq *const *s = fi_seq_all; *s; s++)
			found |= expected[i].seq == *s;
		if (!EXPECT("fi_seq_all: lists every documented sequence", found))
			printf("  missing: %s\n", expected[i].name);
		ok &= found;
	}
	CHECK("fi_seq_all: complete both ways", ok);
}

/* fi_emit_seq puts the hash, little-endian, at the hash offset. */
static void test_emit_seq_hash(void)
{
	bool ok = true;

	for (size_t i = 0; i < NEXPECTED; i++) {
		const struct expect_seq *e = &expected[i];

		for (size_t h = 0; h < NHASH; h++) {
			uint8_t want[BUFSZ], got[BUFSZ];
			struct fi_buf b;

			memcpy(want, e->bytes, e->len);
			if (e->hash >= 0)
				put32(want + e->hash, hashes[h]);
			fi_buf_init(&b, got, sizeof(got), 0);
			fi_emit_seq(&b, e->seq, hashes[h]);
			ok &= EXPECT("fi_emit_seq: no error", b.err == 0);
			ok &= same_bytes("fi_emit_seq: hash inserted", got, b.len,
					 want, e->len);
		}
	}
	CHECK("fi_emit_seq: every template, 7 hashes", ok);
}

/* ------------------------------------------------------- the encoders */

/* Expected encodings, built from the tables above plus docs/sequences.md's rules. */
static size_t want_kcfi_preamble(uint8_t *w, uint32_t hash, int arity)
{
	/* movl $hash, %e?x: b8+r for eax ecx edx ebx esp ebp esi edi */
	static const uint8_t movl[8] = {
		0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
	};

	memcpy(w, x_kcfi_preamble, 16);
	w[0] = movl[arity];
	put32(w + 1, hash);
	return 16;
}

static size_t want_kcfi_caller(uint8_t *w, uint32_t hash, bool jmp,
			       uint64_t ip, uint64_t thunk)
{
	memcpy(w, jmp ? x_kcfi_caller_jmp : x_kcfi_caller, 20);
	put32(w + 2, -hash);
	put32(w + 16, (uint32_t)(thunk - (ip + 20)));
	return 20;
}

static size_t want_fineibt_preamble(uint8_t *w, uint32_t hash)
{
	memcpy(w, x_fineibt_preamble, 16);
	put32(w + 7, hash);
	return 16;
}

static size_t want_fineibt_caller(uint8_t *w, uint32_t hash, bool jmp)
{
	memcpy(w, x_fineibt_caller, 14);
	memcpy(w + 14, jmp ? x_indirect_jmp : x_indirect_call, 6);
	put32(w + 2, hash);
	return 20;
}

static size_t want_paranoid(uint8_t *w, uint32_t hash, bool jmp)
{
	memcpy(w, jmp ? x_paranoid_jmp : x_paranoid_call, 20);
	put32(w + 2, hash);
	return 20;
}

/* The bytes from preamble+11 on; @tail_ip is the run-time preamble+11. */
static size_t want_bhi_tail(uint8_t *w, int arity, bool warn,
			    uint64_t tail_ip, uint64_t stubs)
{
	static const uint8_t jne_nop3[] = { 0x75, 0xf9, 0x0f, 0x1f, 0x00 };

	if (arity == 0) {
		memcpy(w, jne_nop3, 5);
		return 5;
	}
	if (arity == 1 && !warn) {
		memcpy(w, x_arity1_inline, 9);
		return 9;
	}
	w[0] = 0xe8;
	put32(w + 1, (uint32_t)(stubs + 32 * (uint64_t)arity - (tail_ip + 5)));
	return 5;
}

static void init_canary(struct fi_buf *b, uint8_t *mem, size_t cap, uint64_t ip)
{
	memset(mem, CANARY, BUFSZ);
	fi_buf_init(b, mem, cap, ip);
}

static bool canary_from(const uint8_t *mem, size_t from)
{
	for (size_t i = from; i < BUFSZ; i++) {
		if (mem[i] != CANARY)
			return false;
	}
	return true;
}

static void test_enc_kcfi_preamble(void)
{
	uint8_t got[BUFSZ], want[BUFSZ];
	struct fi_buf b;
	bool ok = true;

	for (size_t h = 0; h < NHASH; h++) {
		for (int a = 0; a <= 7; a++) {
			init_canary(&b, got, BUFSZ, 0x1000);
			fi_emit_kcfi_preamble(&b, hashes[h], a);
			ok &= EXPECT("kcfi preamble: no error", !b.err);
			ok &= same_bytes("kcfi preamble: bytes", got, b.len, want,
					 want_kcfi_preamble(want, hashes[h], a));
			ok &= EXPECT("kcfi preamble: nothing past it", canary_from(got, 16));
		}
	}
	CHECK("encoder kcfi preamble: arities 0..7 x 7 hashes", ok);
	for (int a = -1; a <= 8; a += 9) {
		init_canary(&b, got, BUFSZ, 0);
		fi_emit_kcfi_preamble(&b, PH, a);
		CHECK(a < 0 ? "encoder kcfi preamble: arity -1 is -EINVAL, nothing written"
			    : "encoder kcfi preamble: arity 8 is -EINVAL, nothing written",
		      b.err == -EINVAL && b.len == 0 && canary_from(got, 0));
	}
}

/* rel32 distances from the end of an instruction, in range and not. */
static const int64_t dist_ok[] = {
	0, 1, -1, -20, 0x1000, -0x1000, 0x12345678, -0x12345678,
	INT32_MAX, INT32_MIN, INT32_MAX - 32, INT32_MIN + 32,
};
static const int64_t dist_bad[] = {
	(int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1, INT64_MAX / 2,
	-(INT64_MAX / 2), 0x100000000ll,
};
#define NDIST_OK (sizeof(dist_ok) / sizeof(dist_ok[0]))
#define NDIST_BAD (sizeof(dist_bad) / sizeof(dist_bad[0]))

static void test_enc_kcfi_caller(void)
{
	const uint64_t ips[] = { 0x401000, 0x7ffff7a00010ull, 0x100000000ull };
	uint8_t got[BUFSZ], want[BUFSZ];
	struct fi_buf b;
	bool ok = true;

	for (size_t i = 0; i < 3; i++) {
		for (size_t d = 0; d < NDIST_OK; d++) {
			for (int jmp = 0; jmp <= 1; jmp++) {
				uint64_t thunk = ips[i] + 20 + (uint64_t)dist_ok[d];
				uint32_t hash = hashes[(i + d) % NHASH];

				init_canary(&b, got, BUFSZ, ips[i]);
				fi_emit_kcfi_caller(&b, hash, jmp, thunk);
				ok &= EXPECT("kcfi caller: no error", !b.err);
				ok &= same_bytes("kcfi caller: bytes", got, b.len, want,
						 want_kcfi_caller(want, hash, jmp, ips[i], thunk));
			}
		}
	}
	CHECK("encoder kcfi caller: call and jmp, -hash, rel32 both ways", ok);
	ok = true;
	for (size_t d = 0; d < NDIST_BAD; d++) {
		for (int jmp = 0; jmp <= 1; jmp++) {
			init_canary(&b, got, BUFSZ, 0x7f0000000000ull);
			fi_emit_kcfi_caller(&b, PH, jmp,
					    0x7f0000000000ull + 20 + (uint64_t)dist_bad[d]);
			/* The check part fits; the call cannot reach. */
			ok &= EXPECT("kcfi caller: far thunk is -ERANGE",
				     b.err == -ERANGE && b.len == 14 && canary_from(got, 14));
		}
	}
	CHECK("encoder kcfi caller: thunk out of rel32 reach is -ERANGE, no call written", ok);
}

static void test_enc_fineibt(void)
{
	uint8_t got[BUFSZ], want[BUFSZ];
	struct fi_buf b;
	bool ok = true;

	for (size_t h = 0; h < NHASH; h++) {
		init_canary(&b, got, BUFSZ, 0);
		fi_emit_fineibt_preamble(&b, hashes[h]);
		ok &= !b.err && same_bytes("fineibt preamble: bytes", got, b.len, want,
					   want_fineibt_preamble(want, hashes[h]));
		for (int jmp = 0; jmp <= 1; jmp++) {
			init_canary(&b, got, BUFSZ, 0);
			fi_emit_fineibt_caller(&b, hashes[h], jmp);
			ok &= !b.err && same_bytes("fineibt caller: bytes", got, b.len,
						   want, want_fineibt_caller(want, hashes[h], jmp));
			init_canary(&b, got, BUFSZ, 0);
			fi_emit_paranoid_caller(&b, hashes[h], jmp);
			ok &= !b.err && same_bytes("paranoid caller: bytes", got, b.len,
						   want, want_paranoid(want, hashes[h], jmp));
		}
	}
	CHECK("encoder fineibt preamble, caller+call/jmp, paranoid call/jmp x 7 hashes", ok);
}

static void test_enc_bhi_tail(void)
{
	const uint64_t pre_ip = 0x555555555030ull;	/* func-16 */
	const uint64_t tail_ip = pre_ip + 11, end = pre_ip + 16;
	uint8_t got[BUFSZ], want[BUFSZ];
	struct fi_buf b;
	bool ok = true;

	for (int a = 0; a <= 7; a++) {
		for (int warn = 0; warn <= 1; warn++) {
			for (size_t d = 0; d < NDIST_OK; d++) {
				uint64_t stubs = end + (uint64_t)dist_ok[d] - 32 * (uint64_t)a;

				init_canary(&b, got, BUFSZ, tail_ip);
				fi_emit_bhi_tail(&b, a, warn, stubs);
				ok &= EXPECT("bhi tail: no error", !b.err);
				ok &= same_bytes("bhi tail: bytes", got, b.len, want,
						 want_bhi_tail(want, a, warn, tail_ip, stubs));
			}
		}
	}
	CHECK("encoder bhi tail: arities 0..7, warn or not, rel32 both ways", ok);

	/* The same from a whole preamble: the call ends exactly at func+0. */
	init_canary(&b, got, BUFSZ, pre_ip);
	fi_emit_fineibt_preamble(&b, 0xabcdef01);
	b.len = 11;
	fi_emit_bhi_tail(&b, 3, false, pre_ip - 0x1000);
	CHECK("encoder bhi tail: call __bhi_args[3] ends at func+0",
	      !b.err && b.len == 16 && got[11] == 0xe8 &&
	      get32(got + 12) == (uint32_t)(pre_ip - 0x1000 + 3 * 32 - end) &&
	      get32(got + 7) == 0xabcdef01);

	ok = true;
	for (int a = 0; a <= 7; a++) {
		for (size_t d = 0; d < NDIST_BAD; d++) {
			uint64_t stubs = end + (uint64_t)dist_bad[d] - 32 * (uint64_t)a;
			bool inline_form = a == 0 || a == 1;

			init_canary(&b, got, BUFSZ, tail_ip);
			fi_emit_bhi_tail(&b, a, false, stubs);
			/* arity 0 and the arity-1 inline form need no stub. */
			if (inline_form)
				ok &= EXPECT("bhi tail: inline forms ignore stubs", !b.err);
			else
				ok &= EXPECT("bhi tail: far stubs are -ERANGE",
					     b.err == -ERANGE && b.len == 0 && canary_from(got, 0));
			init_canary(&b, got, BUFSZ, tail_ip);
			fi_emit_bhi_tail(&b, a, true, stubs);
			if (a == 0)
				ok &= EXPECT("bhi tail: arity 0 ignores stubs", !b.err);
			else
				ok &= EXPECT("bhi tail: far stubs are -ERANGE (warn)",
					     b.err == -ERANGE && b.len == 0 && canary_from(got, 0));
		}
	}
	CHECK("encoder bhi tail: stubs out of rel32 reach are -ERANGE, nothing written", ok);
	for (int a = -1; a <= 8; a += 9) {
		init_canary(&b, got, BUFSZ, 0);
		fi_emit_bhi_tail(&b, a, false, 0);
		CHECK(a < 0 ? "encoder bhi tail: arity -1 is -EINVAL"
			    : "encoder bhi tail: arity 8 is -EINVAL",
		      b.err == -EINVAL && b.len == 0 && canary_from(got, 0));
	}
}

static void test_enc_rel32(void)
{
	const struct fi_seq *forms[] = { &fi_seq_thunk_call, &fi_seq_thunk_jmp,
					 &fi_seq_bhi_call };
	const uint64_t ip = 0x40000000ull;
	uint8_t got[BUFSZ];
	struct fi_buf b;
	bool ok = true;

	for (size_t f = 0; f < 3; f++) {
		const struct fi_seq *s = forms[f];

		for (size_t d = 0; d < NDIST_OK; d++) {
			uint64_t end = ip + 3 + s->len;

			init_canary(&b, got, BUFSZ, ip);
			fi_emit_bytes(&b, "\x90\x90\x90", 3);	/* ip + len counts */
			fi_emit_rel32(&b, s, end + (uint64_t)dist_ok[d]);
			ok &= EXPECT("rel32: in range", !b.err && b.len == 3u + s->len);
			ok &= EXPECT("rel32: opcode kept", !memcmp(got + 3, s->bytes, s->len - 4));
			ok &= EXPECT("rel32: displacement from the end",
				     (int32_t)get32(got + 3 + s->len - 4) == dist_ok[d]);
		}
		for (size_t d = 0; d < NDIST_BAD; d++) {
			init_canary(&b, got, BUFSZ, ip);
			fi_emit_rel32(&b, s, ip + s->len + (uint64_t)dist_bad[d]);
			ok &= EXPECT("rel32: out of range is -ERANGE",
				     b.err == -ERANGE && b.len == 0 && canary_from(got, 0));
		}
	}
	CHECK("fi_emit_rel32: thunk call/jmp and bhi call, both limits", ok);
}

/* Each composite encoder, by number, into @b; returns its full length. */
#define NCASES 14
static size_t emit_case(int which, struct fi_buf *b)
{
	switch (which) {
	case 0: fi_emit_kcfi_preamble(b, PH, 5); return 16;
	case 1: fi_emit_kcfi_caller(b, PH, false, b->ip + 0x100); return 20;
	case 2: fi_emit_kcfi_caller(b, PH, true, b->ip - 0x100); return 20;
	case 3: fi_emit_fineibt_preamble(b, PH); return 16;
	case 4: fi_emit_fineibt_caller(b, PH, false); return 20;
	case 5: fi_emit_fineibt_caller(b, PH, true); return 20;
	case 6: fi_emit_paranoid_caller(b, PH, false); return 20;
	case 7: fi_emit_paranoid_caller(b, PH, true); return 20;
	case 8: fi_emit_bhi_tail(b, 0, false, 0); return 5;
	case 9: fi_emit_bhi_tail(b, 1, false, 0); return 9;
	case 10: fi_emit_bhi_tail(b, 1, true, b->ip); return 5;
	case 11: fi_emit_bhi_tail(b, 7, false, b->ip); return 5;
	case 12: fi_emit_seq(b, &fi_seq_endbr_poison, 0); return 4;
	case 13: fi_emit_rel32(b, &fi_seq_thunk_call, b->ip); return 6;
	default: return 0;
	}
}

static void test_bounds(void)
{
	uint8_t got[BUFSZ];
	struct fi_buf b;
	bool ok = true;

	for (int w = 0; w < NCASES; w++) {
		struct fi_buf dry = { .mem = got, .err = -1 };	/* emits nothing */
		size_t n = emit_case(w, &dry);

		for (size_t cap = 0; cap < n; cap++) {
			init_canary(&b, got, cap, 0x400000);
			emit_case(w, &b);
			ok &= EXPECT("bounds: short buffer is -ENOSPC", b.err == -ENOSPC);
			ok &= EXPECT("bounds: no write past cap", canary_from(got, cap));
			ok &= EXPECT("bounds: len within cap", b.len <= cap);
		}
		init_canary(&b, got, n, 0x400000);
		emit_case(w, &b);
		ok &= EXPECT("bounds: exact fit works", !b.err && b.len == n &&
			     canary_from(got, n));
	}
	CHECK("bounds: every encoder, every short capacity: -ENOSPC, no overflow", ok);

	init_canary(&b, got, 8, 0);
	fi_emit_bytes(&b, "abc", 3);
	fi_emit_bytes(&b, got, SIZE_MAX);
	CHECK("bounds: a huge length does not wrap", b.err == -ENOSPC && b.len == 3 &&
	      canary_from(got, 3));
}

static void test_sticky(void)
{
	uint8_t got[BUFSZ];
	struct fi_buf b;

	init_canary(&b, got, 10, 0);
	fi_emit_fineibt_preamble(&b, PH);	/* 16 > 10 */
	fi_emit_bytes(&b, "x", 1);		/* would fit, must not run */
	fi_emit_seq(&b, &fi_seq_caller_off, 0);
	CHECK("sticky: after -ENOSPC nothing more is written",
	      b.err == -ENOSPC && b.len == 0 && canary_from(got, 0));

	init_canary(&b, got, BUFSZ, 0);
	fi_emit_rel32(&b, &fi_seq_thunk_call, 0x7fffffffffffull);
	fi_emit_seq(&b, &fi_seq_endbr64, 0);
	fi_emit_kcfi_preamble(&b, PH, 9);	/* would be -EINVAL */
	CHECK("sticky: -ERANGE is kept over later errors and emits",
	      b.err == -ERANGE && b.len == 0 && canary_from(got, 0));

	init_canary(&b, got, 4, 0);
	fi_emit_bhi_tail(&b, 8, false, 0);
	fi_emit_seq(&b, &fi_seq_fineibt_preamble, 0);
	CHECK("sticky: -EINVAL is kept over a later -ENOSPC",
	      b.err == -EINVAL && b.len == 0 && canary_from(got, 0));

	init_canary(&b, got, BUFSZ, 0x1234);
	fi_emit_seq(&b, &fi_seq_endbr64, 0);
	fi_emit_seq(&b, &fi_seq_endbr_poison, 0);
	CHECK("fi_buf: emits append; ip is kept", !b.err && b.len == 8 &&
	      b.ip == 0x1234 && !memcmp(got, x_endbr64, 4) &&
	      !memcmp(got + 4, x_endbr_poison, 4) && canary_from(got, 8));
}

/* -------------------------------------------------------- the matchers */

/*
 * A preamble window (func-16 .. func+3) or call site under test, with what
 * classifying it must give back, and which of its bytes the form covers.
 */
struct sample {
	const char *name;
	uint8_t bytes[20];
	size_t covered;		/* bytes the form defines (16 or 20) */
	uint64_t ip;
	bool caller;
	struct fi_preamble_info pre;
	struct fi_caller_info call;
	int hash_at;		/* offset of the hash bytes */
	int rel_at;		/* offset of a rel32, -1 if none */
};

/* Re-encode a classification: the bytes the matcher claims it saw. */
static size_t reencode_preamble(const struct fi_preamble_info *i, uint64_t ip,
				uint8_t *w)
{
	struct fi_buf b;

	fi_buf_init(&b, w, 20, ip);
	switch (i->form) {
	case FI_PRE_KCFI:
		fi_emit_kcfi_preamble(&b, i->hash, i->arity);
		break;
	case FI_PRE_FINEIBT:
		fi_emit_fineibt_preamble(&b, i->hash);
		break;
	case FI_PRE_FINEIBT_BHI:
		fi_emit_fineibt_preamble(&b, i->hash);
		b.len = 11;
		fi_emit_rel32(&b, &fi_seq_bhi_call, i->bhi_target);
		break;
	case FI_PRE_FINEIBT_ARITY1:
		fi_emit_fineibt_preamble(&b, i->hash);
		b.len = 11;
		fi_emit_bhi_tail(&b, 1, false, 0);
		break;
	default:
		return 0;
	}
	return b.err ? 0 : b.len;
}

static size_t reencode_caller(const struct fi_caller_info *i, uint64_t ip,
			      uint8_t *w)
{
	struct fi_buf b;

	fi_buf_init(&b, w, 20, ip);
	switch (i->form) {
	case FI_CALL_KCFI:
	case FI_CALL_OFF:
		fi_emit_kcfi_caller(&b, i->hash, i->jmp, i->thunk);
		if (i->form == FI_CALL_OFF && !b.err)
			memcpy(w, x_caller_off, 2);
		break;
	case FI_CALL_FINEIBT:
		fi_emit_fineibt_caller(&b, i->hash, i->jmp);
		break;
	case FI_CALL_FINEIBT_THUNK:
		fi_emit_seq(&b, &fi_seq_fineibt_caller, i->hash);
		fi_emit_rel32(&b, i->jmp ? &fi_seq_thunk_jmp : &fi_seq_thunk_call,
			      i->thunk);
		break;
	case FI_CALL_PARANOID:
		fi_emit_paranoid_caller(&b, i->hash, i->jmp);
		break;
	default:
		return 0;
	}
	return b.err ? 0 : b.len;
}

static int nsamples;
static struct sample samples[128];

static struct sample *add_sample(const char *name, bool caller, uint64_t ip,
				 size_t covered, int hash_at, int rel_at)
{
	struct sample *s = &samples[nsamples++];

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->caller = caller;
	s->ip = ip;
	s->covered = covered;
	s->hash_at = hash_at;
	s->rel_at = rel_at;
	return s;
}

/* Every form, built from the independent tables (not by the encoders). */
static void build_samples(void)
{
	static char names[64][48];
	const uint64_t ip = 0x7f1234560000ull, thunk = 0x7f1234000000ull;
	const uint64_t stubs = 0x7f1234800000ull;
	struct sample *s;
	int n = 0;

	for (int a = 0; a <= 7; a++) {
		snprintf(names[n], sizeof(names[n]), "kcfi preamble arity %d", a);
		s = add_sample(names[n++], false, ip, 16, 1, -1);
		want_kcfi_preamble(s->bytes, 0xa0b1c2d3 + (uint32_t)a, a);
		memcpy(s->bytes + 16, x_endbr64, 4);
		s->pre = (struct fi_preamble_info){ FI_PRE_KCFI, 0xa0b1c2d3 + (uint32_t)a, a, 0 };
	}
	s = add_sample("fineibt preamble", false, ip, 16, 7, -1);
	want_fineibt_preamble(s->bytes, 0x5eed1234);
	memcpy(s->bytes + 16, x_endbr_poison, 4);
	s->pre = (struct fi_preamble_info){ FI_PRE_FINEIBT, 0x5eed1234, 0, 0 };
	for (int a = 1; a <= 7; a++) {
		for (int warn = 0; warn <= 1; warn++) {
			if (a == 1 && !warn) {
				s = add_sample("fineibt arity-1 inline", false, ip, 20, 7, -1);
				want_fineibt_preamble(s->bytes, 0x0badf00d);
				want_bhi_tail(s->bytes + 11, 1, false, ip + 11, stubs);
				s->pre = (struct fi_preamble_info){
					FI_PRE_FINEIBT_ARITY1, 0x0badf00d, 1, 0 };
				continue;
			}
			snprintf(names[n], sizeof(names[n]), "fineibt bhi arity %d%s", a,
				 warn ? " warn" : "");
			s = add_sample(names[n++], false, ip, 16, 7, 12);
			want_fineibt_preamble(s->bytes, 0x0badf00d);
			want_bhi_tail(s->bytes + 11, a, warn, ip + 11, stubs);
			memcpy(s->bytes + 16, x_endbr_poison, 4);
			s->pre = (struct fi_preamble_info){ FI_PRE_FINEIBT_BHI, 0x0badf00d,
							    -1, stubs + 32 * (uint64_t)a };
		}
	}
	for (int jmp = 0; jmp <= 1; jmp++) {
		const char *j = jmp ? " jmp" : " call";

		snprintf(names[n], sizeof(names[n]), "kcfi caller%s", j);
		s = add_sample(names[n++], true, ip + 0x40, 20, 2, 16);
		want_kcfi_caller(s->bytes, 0x13572468, jmp, ip + 0x40, thunk);
		s->call = (struct fi_caller_info){ FI_CALL_KCFI, 0x13572468, jmp, thunk };

		snprintf(names[n], sizeof(names[n]), "off caller%s", j);
		s = add_sample(names[n++], true, ip + 0x80, 20, 2, 16);
		want_kcfi_caller(s->bytes, 0x13572468, jmp, ip + 0x80, ip + 0x9000);
		memcpy(s->bytes, x_caller_off, 2);
		s->call = (struct fi_caller_info){ FI_CALL_OFF, 0x13572468, jmp, ip + 0x9000 };

		snprintf(names[n], sizeof(names[n]), "fineibt caller%s", j);
		s = add_sample(names[n++], true, ip, 20, 2, -1);
		want_fineibt_caller(s->bytes, 0x24681357, jmp);
		s->call = (struct fi_caller_info){ FI_CALL_FINEIBT, 0x24681357, jmp, 0 };

		snprintf(names[n], sizeof(names[n]), "fineibt caller via thunk%s", j);
		s = add_sample(names[n++], true, ip, 20, 2, 16);
		want_kcfi_caller(s->bytes, 0, jmp, ip, thunk);	/* the thunk call */
		memcpy(s->bytes, x_fineibt_caller, 14);
		put32(s->bytes + 2, 0x24681357);
		s->call = (struct fi_caller_info){ FI_CALL_FINEIBT_THUNK, 0x24681357,
						   jmp, thunk };

		snprintf(names[n], sizeof(names[n]), "paranoid caller%s", j);
		s = add_sample(names[n++], true, ip, 20, 2, -1);
		want_paranoid(s->bytes, 0xfeedface, jmp);
		s->call = (struct fi_caller_info){ FI_CALL_PARANOID, 0xfeedface, jmp, 0 };
	}
}

static bool same_preamble(const struct fi_preamble_info *a,
			  const struct fi_preamble_info *b)
{
	return a->form == b->form && a->hash == b->hash && a->arity == b->arity &&
	       (a->form != FI_PRE_FINEIBT_BHI || a->bhi_target == b->bhi_target);
}

static bool same_caller(const struct fi_caller_info *a,
			const struct fi_caller_info *b)
{
	bool thunk = a->form == FI_CALL_KCFI || a->form == FI_CALL_OFF ||
		     a->form == FI_CALL_FINEIBT_THUNK;

	return a->form == b->form && a->hash == b->hash && a->jmp == b->jmp &&
	       (!thunk || a->thunk == b->thunk);
}

/* Classify @p as sample @s is (caller or preamble); true if it matched. */
static bool classify(const struct sample *s, const uint8_t *p,
		     struct fi_preamble_info *pi, struct fi_caller_info *ci)
{
	if (s->caller)
		return fi_classify_caller(p, s->ip, ci) != FI_CALL_NONE;
	return fi_classify_preamble(p, s->ip, pi) != FI_PRE_NONE;
}

static void test_round_trip(void)
{
	for (int i = 0; i < nsamples; i++) {
		const struct sample *s = &samples[i];
		struct fi_preamble_info pi;
		struct fi_caller_info ci;
		char name[96];
		bool ok;

		classify(s, s->bytes, &pi, &ci);
		ok = s->caller ? same_caller(&ci, &s->call) : same_preamble(&pi, &s->pre);
		snprintf(name, sizeof(name), "round trip: %s", s->name);
		if (!CHECK(name, ok))
			hexdump("bytes", s->bytes, 20);
		/* The return value alone, with a NULL out. */
		snprintf(name, sizeof(name), "classify with NULL out: %s", s->name);
		CHECK(name, s->caller ? fi_classify_caller(s->bytes, s->ip, NULL) == s->call.form
				      : fi_classify_preamble(s->bytes, s->ip, NULL) == s->pre.form);
	}
}

/* The encoders' own output classifies back to what was asked. */
static void test_encode_classify(void)
{
	uint8_t buf[BUFSZ];
	struct fi_preamble_info pi;
	struct fi_caller_info ci;
	struct fi_buf b;
	bool ok = true;
	uint32_t h;
	int ar;

	for (size_t k = 0; k < NHASH; k++) {
		for (int a = 0; a <= 7; a++) {
			fi_buf_init(&b, buf, BUFSZ, 0x1000);
			fi_emit_kcfi_preamble(&b, hashes[k], a);
			fi_emit_seq(&b, &fi_seq_endbr64, 0);
			ok &= EXPECT("encode/classify kcfi preamble",
				     fi_classify_preamble(buf, 0x1000, &pi) == FI_PRE_KCFI &&
				     pi.hash == hashes[k] && pi.arity == a);
			ok &= EXPECT("fi_match_kcfi_preamble",
				     fi_match_kcfi_preamble(buf, &h, &ar) &&
				     h == hashes[k] && ar == a &&
				     fi_match_kcfi_preamble(buf, NULL, NULL));
			for (int warn = 0; warn <= 1; warn++) {
				enum fi_preamble_form f = a == 0 ? FI_PRE_FINEIBT :
					a == 1 && !warn ? FI_PRE_FINEIBT_ARITY1 :
					FI_PRE_FINEIBT_BHI;

				memset(buf, 0, sizeof(buf));
				fi_buf_init(&b, buf, BUFSZ, 0x7000);
				fi_emit_fineibt_preamble(&b, hashes[k]);
				b.len = 11;
				fi_emit_bhi_tail(&b, a, warn, 0x9000);
				ok &= EXPECT("encode/classify fineibt preamble",
					     !b.err && fi_classify_preamble(buf, 0x7000, &pi) == f &&
					     pi.hash == hashes[k]);
				if (f == FI_PRE_FINEIBT_BHI)
					ok &= EXPECT("encode/classify bhi target",
						     pi.bhi_target == 0x9000 + 32u * (unsigned)a);
			}
		}
		for (int jmp = 0; jmp <= 1; jmp++) {
			fi_buf_init(&b, buf, BUFSZ, 0x2000);
			fi_emit_kcfi_caller(&b, hashes[k], jmp, 0x1000);
			ok &= EXPECT("encode/classify kcfi caller",
				     fi_classify_caller(buf, 0x2000, &ci) == FI_CALL_KCFI &&
				     ci.hash == hashes[k] && ci.jmp == jmp && ci.thunk == 0x1000);
			ok &= EXPECT("decode_caller_hash of a kcfi caller",
				     fi_decode_caller_hash(buf) == hashes[k]);
			memcpy(buf, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
			ok &= EXPECT("encode/classify off caller",
				     fi_classify_caller(buf, 0x2000, &ci) == FI_CALL_OFF &&
				     ci.hash == hashes[k] && ci.jmp == jmp && ci.thunk == 0x1000);
			ok &= EXPECT("decode_caller_hash of an off caller",
				     fi_decode_caller_hash(buf) == hashes[k]);
			fi_buf_init(&b, buf, BUFSZ, 0);
			fi_emit_fineibt_caller(&b, hashes[k], jmp);
			ok &= EXPECT("encode/classify fineibt caller",
				     fi_classify_caller(buf, 0, &ci) == FI_CALL_FINEIBT &&
				     ci.hash == hashes[k] && ci.jmp == jmp);
			fi_buf_init(&b, buf, BUFSZ, 0);
			fi_emit_paranoid_caller(&b, hashes[k], jmp);
			ok &= EXPECT("encode/classify paranoid caller",
				     fi_classify_caller(buf, 0, &ci) == FI_CALL_PARANOID &&
				     ci.hash == hashes[k] && ci.jmp == jmp);
		}
	}
	CHECK("encode -> classify: every encoder, 7 hashes, arities, call/jmp", ok);
}

/*
 * Every single-byte change of every form: the matcher either rejects it, or
 * what it reports re-encodes to exactly the changed bytes (the change made
 * another valid form, e.g. e8 -> e9 turns a call into a tail call). A
 * change inside the hash may change the hash and nothing else.
 */
static bool corrupt_one(const struct sample *s, size_t pos, uint8_t v,
			int *accepted)
{
	struct fi_preamble_info pi = { 0 };
	struct fi_caller_info ci = { 0 };
	uint8_t p[20], w[20];
	bool in_hash = (int)pos >= s->hash_at && (int)pos < s->hash_at + 4;
	size_t n;

	memcpy(p, s->bytes, 20);
	p[pos] = v;
	if (!classify(s, p, &pi, &ci))
		return true;
	++*accepted;
	n = s->caller ? reencode_caller(&ci, s->ip, w) : reencode_preamble(&pi, s->ip, w);
	if (n < s->covered || memcmp(w, p, s->covered)) {
		printf("  %s: byte %zu = %02x accepted as something else\n",
		       s->name, pos, v);
		return false;
	}
	if (!in_hash)
		return true;
	if (s->caller) {
		struct fi_caller_info want = s->call;

		want.hash = s->call.form == FI_CALL_KCFI || s->call.form == FI_CALL_OFF ?
			    -get32(p + 2) : get32(p + 2);
		return same_caller(&ci, &want);
	} else {
		struct fi_preamble_info want = s->pre;

		want.hash = get32(p + s->hash_at);
		return same_preamble(&pi, &want);
	}
}

static void test_corruption(void)
{
	for (int i = 0; i < nsamples; i++) {
		const struct sample *s = &samples[i];
		int accepted = 0, rejected_outside = 0, tried_outside = 0;
		char name[96];
		bool ok = true;

		for (size_t pos = 0; pos < s->covered; pos++) {
			const uint8_t o = s->bytes[pos];
			const uint8_t vals[] = { o ^ 0x01, o ^ 0x80, o ^ 0xff, o ^ 0x10,
						 (uint8_t)(o + 1), 0x00, 0x90, 0xcc };
			bool in_hash = (int)pos >= s->hash_at && (int)pos < s->hash_at + 4;
			bool in_rel = s->rel_at >= 0 && (int)pos >= s->rel_at &&
				      (int)pos < s->rel_at + 4;

			for (size_t k = 0; k < sizeof(vals); k++) {
				int before = accepted;

				if (vals[k] == o)
					continue;
				ok &= corrupt_one(s, pos, vals[k], &accepted);
				if (!in_hash && !in_rel) {
					tried_outside++;
					rejected_outside += accepted == before;
				}
			}
		}
		snprintf(name, sizeof(name), "corruption: %s: rejected or exact", s->name);
		CHECK(name, ok);
		/* Outside hash and rel32 nearly every change must be rejected. */
		snprintf(name, sizeof(name), "corruption: %s: >= 95%% rejected outside hash",
			 s->name);
		if (!CHECK(name, rejected_outside * 100 >= tried_outside * 95))
			printf("  %d of %d rejected\n", rejected_outside, tried_outside);
	}
}

/* The five ENDBR-like values (v6.18's poison last), stated independently. */
static bool ref_is_endbr(uint32_t v)
{
	return v == 0xfa1e0ff3 || v == 0xfb1e0ff3 || v == 0x001f0f66 ||
	       v == 0x001f0ff5 || v == 0xd6401f0f;
}

static void test_endbr(void)
{
	static const struct { uint8_t b[4]; bool is, exact; } cases[] = {
		{ { 0xf3, 0x0f, 0x1e, 0xfa }, true, true },	/* endbr64 */
		{ { 0xf3, 0x0f, 0x1e, 0xfb }, true, false },	/* endbr32 */
		{ { 0x0f, 0x1f, 0x40, 0xd6 }, true, false },	/* v6.18 poison */
		{ { 0x66, 0x0f, 0x1f, 0x00 }, true, false },	/* poison */
		{ { 0xf5, 0x0f, 0x1f, 0x00 }, true, false },	/* bhi magic */
		{ { 0xf3, 0x0f, 0x1e, 0xf9 }, false, false },
		{ { 0xf3, 0x0f, 0x1e, 0xfe }, false, false },
		{ { 0xf2, 0x0f, 0x1e, 0xfa }, false, false },
		{ { 0x66, 0x0f, 0x1f, 0x44 }, false, false },
		{ { 0x0f, 0x1f, 0x40, 0x00 }, false, false },	/* nop4 */
		{ { 0xf4, 0x0f, 0x1f, 0x00 }, false, false },
		{ { 0xf5, 0x0f, 0x1f, 0x01 }, false, false },
		{ { 0x0d, 0xf0, 0xe1, 0x05 }, false, false },	/* -endbr64 */
		{ { 0x90, 0x90, 0x90, 0x90 }, false, false },
		{ { 0x00, 0x00, 0x00, 0x00 }, false, false },
		{ { 0xff, 0xff, 0xff, 0xff }, false, false },
	};
	uint8_t un[8];
	bool ok = true;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "endbr: %02x %02x %02x %02x is %s%s",
			 cases[i].b[0], cases[i].b[1], cases[i].b[2], cases[i].b[3],
			 cases[i].is ? "endbr-like" : "not endbr",
			 cases[i].exact ? ", exact" : "");
		/* Unaligned on purpose. */
		memcpy(un + 1, cases[i].b, 4);
		CHECK(name, fi_is_endbr(un + 1) == cases[i].is &&
			    fi_exact_endbr(un + 1) == cases[i].exact &&
			    fi_is_endbr_val(get32(cases[i].b)) == cases[i].is);
	}
	/* Every one-bit neighbour of the four values, and random values. */
	for (int v = 0; v < 4; v++) {
		const uint32_t base[] = { 0xfa1e0ff3, 0xfb1e0ff3, 0x001f0f66, 0x001f0ff5 };

		for (int bit = 0; bit < 32; bit++) {
			uint32_t n = base[v] ^ (1u << bit);

			ok &= EXPECT("endbr: neighbours", fi_is_endbr_val(n) == ref_is_endbr(n));
		}
	}
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ok &= EXPECT("endbr: random values",
			     fi_is_endbr_val((uint32_t)x) == ref_is_endbr((uint32_t)x));
	}
	CHECK("endbr: fi_is_endbr_val agrees with the reference on 1M+128 values", ok);
}

static void test_decode_caller_hash(void)
{
	uint8_t p[8] = { 0x41, 0xba, B4(0xedcba988u) };

	CHECK("decode_caller_hash: 41 ba imm -> -imm", fi_decode_caller_hash(p) == 0x12345678);
	p[0] = 0xeb, p[1] = 0x0c;
	CHECK("decode_caller_hash: eb 0c imm -> -imm", fi_decode_caller_hash(p) == 0x12345678);
	p[1] = 0x0d;
	CHECK("decode_caller_hash: eb 0d -> 0", fi_decode_caller_hash(p) == 0);
	p[0] = 0x41, p[1] = 0xbb;
	CHECK("decode_caller_hash: 41 bb -> 0", fi_decode_caller_hash(p) == 0);
	p[0] = 0x40, p[1] = 0xba;
	CHECK("decode_caller_hash: 40 ba -> 0", fi_decode_caller_hash(p) == 0);
	p[0] = 0xba, p[1] = 0x41;
	CHECK("decode_caller_hash: ba 41 -> 0", fi_decode_caller_hash(p) == 0);
}

static void test_match_thunk_call(void)
{
	const uint64_t ip = 0x555555560000ull;
	uint8_t p[6] = { 0x2e, 0xe8 };
	bool jmp = true;

	put32(p + 2, (uint32_t)(0x555555550000ull - (ip + 6)));
	CHECK("thunk call: 2e e8 to the thunk, backwards",
	      fi_match_thunk_call(p, ip, 0x555555550000ull, &jmp) && !jmp);
	CHECK("thunk call: NULL jmp is fine",
	      fi_match_thunk_call(p, ip, 0x555555550000ull, NULL));
	CHECK("thunk call: another target is not the thunk",
	      !fi_match_thunk_call(p, ip, 0x555555550001ull, NULL));
	CHECK("thunk call: the same bytes elsewhere miss it",
	      !fi_match_thunk_call(p, ip + 1, 0x555555550000ull, NULL));
	p[1] = 0xe9;
	CHECK("thunk call: 2e e9 is a tail call",
	      fi_match_thunk_call(p, ip, 0x555555550000ull, &jmp) && jmp);
	put32(p + 2, 0x100);
	CHECK("thunk call: forwards", fi_match_thunk_call(p, ip, ip + 6 + 0x100, NULL));
	/* Any one changed byte of the opcode: not it, or exactly the other form. */
	for (int form = 0; form <= 1; form++) {
		bool ok = true;

		for (int pos = 0; pos < 2; pos++) {
			for (int v = 0; v < 256; v++) {
				uint8_t q[6];

				memcpy(q, p, 6);
				q[1] = form ? 0xe9 : 0xe8;
				q[0] = 0x2e;
				q[pos] = (uint8_t)v;
				if (fi_match_thunk_call(q, ip, ip + 6 + 0x100, &jmp))
					ok &= q[0] == 0x2e && q[1] == (jmp ? 0xe9 : 0xe8);
			}
		}
		CHECK(form ? "thunk call: every opcode byte value, jmp form"
			   : "thunk call: every opcode byte value, call form", ok);
	}
	{
		uint8_t q[6] = { 0xeb, 0x0c, B4(0x11111111u) };
		bool ok = true;

		for (int pos = 0; pos < 2; pos++) {
			for (int v = 0; v < 256; v++) {
				uint8_t r[6];

				memcpy(r, q, 6);
				r[pos] = (uint8_t)v;
				if (fi_decode_caller_hash(r))
					ok &= (r[0] == 0xeb && r[1] == 0x0c) ||
					      (r[0] == 0x41 && r[1] == 0xba);
			}
		}
		CHECK("decode_caller_hash: every value of its first two bytes", ok);
	}
	p[0] = 0x3e;
	CHECK("thunk call: ds prefix is not it", !fi_match_thunk_call(p, ip, ip + 0x106, NULL));
	p[0] = 0x2e, p[1] = 0xeb;
	CHECK("thunk call: 2e eb is not it", !fi_match_thunk_call(p, ip, ip + 0x106, NULL));
	p[0] = 0xe8;
	CHECK("thunk call: without the cs prefix is not it",
	      !fi_match_thunk_call(p, ip, ip + 0x106, NULL));
}

static void test_decode_ud(void)
{
	static const struct {
		const char *name;
		uint8_t b[4];
		size_t avail;
		enum fi_ud_kind kind;
		int len;
	} cases[] = {
		{ "ud2", { 0x0f, 0x0b }, 2, FI_UD_UD2, 2 },
		{ "ud2, 1 byte readable", { 0x0f, 0x0b }, 1, FI_UD_NONE, 0 },
		{ "ud2, nothing readable", { 0x0f, 0x0b }, 0, FI_UD_NONE, 0 },
		{ "ea", { 0xea, 0x78 }, 1, FI_UD_EA, 1 },
		{ "ea, nothing readable", { 0xea }, 0, FI_UD_NONE, 0 },
		{ "lock jne .-3", { 0xf0, 0x75, 0xfd }, 3, FI_UD_LOCK_JCC, 3 },
		{ "lock jo", { 0xf0, 0x70, 0x00 }, 4, FI_UD_LOCK_JCC, 3 },
		{ "lock jg", { 0xf0, 0x7f, 0x12 }, 3, FI_UD_LOCK_JCC, 3 },
		{ "lock jne, 2 bytes readable", { 0xf0, 0x75, 0xfd }, 2, FI_UD_NONE, 0 },
		{ "lock + 6f", { 0xf0, 0x6f, 0xfd }, 3, FI_UD_NONE, 0 },
		{ "lock + 80", { 0xf0, 0x80, 0x00 }, 3, FI_UD_NONE, 0 },
		{ "lock add", { 0xf0, 0x01, 0x03 }, 3, FI_UD_NONE, 0 },
		{ "jne without lock", { 0x75, 0xfd }, 2, FI_UD_NONE, 0 },
		{ "ud1", { 0x0f, 0xb9, 0xcc }, 3, FI_UD_NONE, 0 },
		{ "0f 0c", { 0x0f, 0x0c }, 2, FI_UD_NONE, 0 },
		{ "nop", { 0x90 }, 1, FI_UD_NONE, 0 },
		{ "int3", { 0xcc }, 1, FI_UD_NONE, 0 },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, FI_UD_NONE, 0 },
		{ "d6 (UDB)", { 0xd6 }, 1, FI_UD_UDB, 1 },
		{ "d6, nothing readable", { 0xd6 }, 0, FI_UD_NONE, 0 },
		{ "d7 (xlat)", { 0xd7 }, 1, FI_UD_NONE, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[80];
		int len = 99;

		snprintf(name, sizeof(name), "decode_ud: %s", cases[i].name);
		CHECK(name, fi_decode_ud(cases[i].b, cases[i].avail, &len) == cases[i].kind &&
			    len == cases[i].len);
	}
	/* At the #UD offsets of the templates themselves. */
	for (size_t i = 0; i < NEXPECTED; i++) {
		const struct fi_seq *s = expected[i].seq;
		enum fi_ud_kind want;
		char name[80];
		int len;

		if (s->ud < 0)
			continue;
		want = s->bytes[s->ud] == 0xea ? FI_UD_EA :
		       s->bytes[s->ud] == 0xd6 ? FI_UD_UDB :
		       s->bytes[s->ud] == 0xf0 ? FI_UD_LOCK_JCC : FI_UD_UD2;
		snprintf(name, sizeof(name), "decode_ud: at %s+%d", s->name, s->ud);
		CHECK(name, fi_decode_ud(s->bytes + s->ud, s->len - s->ud, &len) == want &&
			    len == (want == FI_UD_EA || want == FI_UD_UDB ? 1 :
				    want == FI_UD_UD2 ? 2 : 3));
	}
}

static void test_arity_names(void)
{
	static const char *const want[] = {
		"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
	};
	bool ok = true;

	for (int a = 0; a <= 7; a++)
		ok &= !strcmp(fi_arity_reg_name(a), want[a]);
	CHECK("arity register names 0..7", ok);
	CHECK("arity register names out of range",
	      !strcmp(fi_arity_reg_name(-1), "?") && !strcmp(fi_arity_reg_name(8), "?"));
}

int main(void)
{
	test_offsets();
	test_templates();
	test_seq_all();
	test_emit_seq_hash();
	test_enc_kcfi_preamble();
	test_enc_kcfi_caller();
	test_enc_fineibt();
	test_enc_bhi_tail();
	test_enc_rel32();
	test_bounds();
	test_sticky();
	build_samples();
	test_round_trip();
	test_encode_classify();
	test_corruption();
	test_endbr();
	test_decode_caller_hash();
	test_match_thunk_call();
	test_decode_ud();
	test_arity_names();
	return fi_check_exit();
}
