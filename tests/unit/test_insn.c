/* SPDX-License-Identifier: MIT */
/*
 * Byte-exact tests of every template and encoder of src/insn.c, and of its
 * matchers and #UD decoder.
 *
 * The expected bytes below are written out again, from the tables of
 * DESIGN.md section 2, on purpose: this file is the independent statement
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

/* DESIGN.md section 1 and 2, with the placeholder hash 0x12345678. */
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
	CHECK("fi_seq_all: holds at least the 18 sequences of DESIGN.md", n >= 18);
	for (size_t i = 0; i < 18; i++) {
		bool found = false;

		for (const struct fi_seq *const *s = fi_seq_all; *s; s++)
			found |= expected[i].seq == *s;
		if (!EXPECT("fi_seq_all: lists every DESIGN.md sequence", found))
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

/* Expected encodings, built from the tables above plus DESIGN.md rules. */
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
	fi_emit_bhi_tail(&b, 3, false, 0x1000);
	CHECK("encoder bhi tail: call __bhi_args[3] ends at func+0",
	      !b.err && b.len == 16 && got[11] == 0xe8 &&
	      get32(got + 12) == (uint32_t)(0x1000 + 3 * 32 - end) &&
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
