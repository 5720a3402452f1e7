/* SPDX-License-Identifier: MIT */
/*
 * The v6.18 sequence set (docs/sequences.md): its encoders byte-exact, its
 * forms classified (and told apart from v4's), its #UD bytes decoded, and
 * the set selection itself. Expected bytes are spelled out again here, as
 * test_insn.c does for v4; LLVM checks them a third way (insn_oracle).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "insn.h"

#define B4(v)	(uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), \
		(uint8_t)((v) >> 24)
#define H	0xcafe5a5au
#define IP	0x401000u

static bool same(const char *name, const uint8_t *got, size_t n,
		 const uint8_t *want, size_t wn)
{
	bool ok = n == wn && !memcmp(got, want, wn);

	if (!CHECK(name, ok)) {
		printf("  got :");
		for (size_t i = 0; i < n; i++)
			printf(" %02x", got[i]);
		printf("\n");
	}
	return ok;
}

static void test_select(void)
{
	struct fi_buf b;
	uint8_t m[8];

	CHECK("set names", fi_set_parse("v4") == FI_SET_V4 &&
	      fi_set_parse("v6.18") == FI_SET_V618 &&
	      fi_set_parse("v618") == FI_SET_V618 &&
	      fi_set_parse("v6") < 0 && fi_set_parse("") < 0 &&
	      fi_set_parse(NULL) < 0);
	CHECK("set name round trip", !strcmp(fi_set_name(FI_SET_V618), "v6.18") &&
	      !strcmp(fi_set_name(FI_SET_V4), "v4") && !strcmp(fi_set_name(9), "?"));
	fi_buf_init(&b, m, sizeof(m), 0);
	CHECK("fi_buf_init: v4 by default", b.set == FI_SET_V4 && !b.err);
	fi_buf_init_set(&b, m, sizeof(m), 0, FI_NSETS);
	CHECK("fi_buf_init_set: unknown set is -EINVAL", b.err == -EINVAL);
	fi_emit_poison(&b);
	CHECK("fi_buf_init_set: sticky after a bad set", b.len == 0);
}

static void test_encoders(void)
{
	static const uint8_t pre[] = {
		0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x81, 0xea, B4(H),
		0x2e, 0x2e, 0x2e, 0x75, 0x03, 0x0f, 0x1f, 0x40, 0xd6,
	};
	static const uint8_t caller[] = {
		0x41, 0xba, B4(H), 0x4d, 0x8d, 0x5b, 0xf0, 0x0f, 0x1f, 0x40, 0x00,
		0x2e, 0x2e, 0x2e, 0x41, 0xff, 0xd3,
	};
	static const uint8_t paranoid_jmp[] = {
		0x41, 0xba, B4(H), 0x45, 0x3b, 0x53, 0xf7, 0x4d, 0x8d, 0x5b, 0xf0,
		0x75, 0xfd, 0x2e, 0x41, 0xff, 0xe3,
	};
	/* rel32 to 0x402000 from the end of the call at IP + 20 */
	static const uint8_t kcfi[] = {
		0x41, 0xba, B4(-H), 0x45, 0x03, 0x53, 0xf1, 0x75, 0x01, 0xa8, 0xd6,
		0x2e, 0xe8, B4(0x402000 - (IP + 20)),
	};
	static const uint8_t check_off[] = {
		0xeb, 0x0c, B4(-H), 0x45, 0x03, 0x53, 0xf1, 0x75, 0x01, 0xa8, 0xd6,
	};
	uint8_t m[64];
	struct fi_buf b;

	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_fineibt_preamble(&b, H);
	fi_emit_poison(&b);
	same("v6.18 preamble + poison", m, b.len, pre, sizeof(pre));
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_fineibt_caller(&b, H, false);
	same("v6.18 caller: CS-padded call", m, b.len, caller, sizeof(caller));
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_paranoid_caller(&b, H, true);
	same("v6.18 paranoid tail call", m, b.len, paranoid_jmp, sizeof(paranoid_jmp));
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_kcfi_caller(&b, H, false, 0x402000);
	same("v6.18 kcfi caller: jne .+3; test $0xd6,%al", m, b.len, kcfi, sizeof(kcfi));
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_kcfi_check(&b, H, true);
	same("v6.18 kcfi check, cfi=off", m, b.len, check_off, sizeof(check_off));
}

static void test_bhi_tail(void)
{
	static const uint8_t a0[] = { 0x2e, 0x2e, 0x2e, 0x75, 0x03 };
	/* __bhi_args[1] at 0x403020 from the end of the call at preamble+16 */
	static const uint8_t a1[] = { 0xe8, B4(0x403020 - (IP + 16)) };
	uint8_t m[16];
	struct fi_buf b;

	for (int warn = 0; warn <= 1; warn++) {
		fi_buf_init_set(&b, m, sizeof(m), IP + 11, FI_SET_V618);
		fi_emit_bhi_tail(&b, 0, warn, 0x403000);
		same(warn ? "v6.18 bhi tail a0 warn: the plain jne" :
		     "v6.18 bhi tail a0: the plain jne", m, b.len, a0, sizeof(a0));
		fi_buf_init_set(&b, m, sizeof(m), IP + 11, FI_SET_V618);
		fi_emit_bhi_tail(&b, 1, warn, 0x403000);
		same(warn ? "v6.18 bhi tail a1 warn: stub call" :
		     "v6.18 bhi tail a1: stub call, no inline form",
		     m, b.len, a1, sizeof(a1));
	}
	CHECK("v6.18 has no arity-1 inline form",
	      !fi_set_forms(FI_SET_V618)->arity1 && fi_set_forms(FI_SET_V4)->arity1);
}

static void test_indirect(void)
{
	static const struct {
		int reg; bool jmp; size_t size; uint8_t want[6]; size_t n;
	} cases[] = {
		{ 11, false, 6, { 0x2e, 0x2e, 0x2e, 0x41, 0xff, 0xd3 }, 6 },
		{ 0, true, 6, { 0x2e, 0x2e, 0x2e, 0x2e, 0xff, 0xe0 }, 6 },
		{ 8, false, 0, { 0x41, 0xff, 0xd0 }, 3 },
		{ 3, false, 2, { 0xff, 0xd3 }, 2 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t m[8];
		struct fi_buf b;
		char name[64];

		fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
		fi_emit_indirect(&b, cases[i].reg, cases[i].jmp, cases[i].size);
		snprintf(name, sizeof(name), "v6.18 indirect reg %d size %zu",
			 cases[i].reg, cases[i].size);
		same(name, m, b.len, cases[i].want, cases[i].n);
	}
}

static void test_classify(void)
{
	uint8_t m[64];
	struct fi_buf b;
	struct fi_preamble_info pi;
	struct fi_caller_info ci;

	for (int set = 0; set < FI_NSETS; set++) {
		char name[80];

		fi_buf_init_set(&b, m, sizeof(m), IP, set);
		fi_emit_fineibt_preamble(&b, H);
		fi_emit_poison(&b);
		snprintf(name, sizeof(name), "%s preamble classified, set known",
			 fi_set_name(set));
		CHECK(name, fi_classify_preamble(m, IP, &pi) == FI_PRE_FINEIBT &&
		      pi.hash == H && pi.set == set && pi.arity == 0);
		for (int jmp = 0; jmp <= 1; jmp++) {
			fi_buf_init_set(&b, m, sizeof(m), IP, set);
			fi_emit_fineibt_caller(&b, H, jmp);
			snprintf(name, sizeof(name), "%s caller%s classified",
				 fi_set_name(set), jmp ? " (jmp)" : "");
			CHECK(name, fi_classify_caller(m, IP, &ci) == FI_CALL_FINEIBT &&
			      ci.hash == H && ci.jmp == jmp && ci.set == set);
			fi_buf_init_set(&b, m, sizeof(m), IP, set);
			fi_emit_paranoid_caller(&b, H, jmp);
			snprintf(name, sizeof(name), "%s paranoid%s classified",
				 fi_set_name(set), jmp ? " (jmp)" : "");
			CHECK(name, fi_classify_caller(m, IP, &ci) == FI_CALL_PARANOID &&
			      ci.hash == H && ci.jmp == jmp && ci.set == set);
			fi_buf_init_set(&b, m, sizeof(m), IP, set);
			fi_emit_kcfi_caller(&b, H, jmp, 0x402000);
			snprintf(name, sizeof(name), "%s kcfi caller%s classified",
				 fi_set_name(set), jmp ? " (jmp)" : "");
			CHECK(name, fi_classify_caller(m, IP, &ci) == FI_CALL_KCFI &&
			      ci.hash == H && ci.jmp == jmp && ci.set == set &&
			      ci.thunk == 0x402000);
		}
	}
	/* The v6.18 preamble tail without its poison is no preamble. */
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_fineibt_preamble(&b, H);
	memcpy(m + 16, "\xf3\x0f\x1e\xfa", 4);
	CHECK("v6.18 preamble without its UDB poison: not a preamble",
	      fi_classify_preamble(m, IP, NULL) == FI_PRE_NONE);
	/* A v6.18 kcfi site off: eb 0c over its movl. */
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_kcfi_check(&b, H, true);
	fi_emit_seq(&b, fi_set_forms(FI_SET_V618)->indirect[0], 0);
	CHECK("v6.18 kcfi off + CS-padded call classified",
	      fi_classify_caller(m, IP, &ci) == FI_CALL_OFF && ci.hash == H &&
	      ci.thunk == 0 && ci.set == FI_SET_V618);
	/* jne .+3 with anything but the test after it is not a kCFI check. */
	fi_buf_init_set(&b, m, sizeof(m), IP, FI_SET_V618);
	fi_emit_kcfi_caller(&b, H, false, 0x402000);
	m[13] = 0xd7;
	CHECK("v6.18 kcfi caller with a broken test: not a call site",
	      fi_classify_caller(m, IP, NULL) == FI_CALL_NONE);
}

int main(void)
{
	test_select();
	test_encoders();
	test_bhi_tail();
	test_indirect();
	test_classify();
	return fi_check_exit();
}
