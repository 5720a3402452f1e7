/* SPDX-License-Identifier: MIT */
/*
 * The byte sequences. Each template is written once, with the disassembly
 * it must produce beside it; hashes are the placeholder 0x12345678.
 */
#include <errno.h>
#include <string.h>

#include "insn.h"

#define SEQ(ident, nm, h, u, ...)					\
	static const uint8_t ident##_bytes[] = { __VA_ARGS__ };		\
	const struct fi_seq ident = {					\
		.name = nm, .bytes = ident##_bytes,			\
		.len = sizeof(ident##_bytes), .hash = h, .ud = u,	\
	}

/*
 * kCFI preamble, func-16 (arity register eax here; b8+r for arity r):
 *  0:  b8 78 56 34 12		movl   $0x12345678, %eax
 *  5:  90 x 11			nop
 */
SEQ(fi_seq_kcfi_preamble, "kcfi_preamble", FI_KCFI_PREAMBLE_HASH, -1,
    0xb8, 0x78, 0x56, 0x34, 0x12,
    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90);

/*
 * kCFI call site (the imm is -hash):
 *  0:  41 ba 78 56 34 12	movl   $0x12345678, %r10d
 *  6:  45 03 53 f1		addl   -0xf(%r11), %r10d
 *  a:  74 02			je     e
 *  c:  0f 0b			ud2
 *  e:  2e e8 00 00 00 00	cs call __x86_indirect_thunk_r11
 */
SEQ(fi_seq_kcfi_caller, "kcfi_caller", FI_KCFI_CALLER_HASH, FI_KCFI_CALLER_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x03, 0x53, 0xf1,
    0x74, 0x02,
    0x0f, 0x0b,
    0x2e, 0xe8, 0x00, 0x00, 0x00, 0x00);

/* The same, as a tail call: e: 2e e9 rel32  cs jmp __x86_indirect_thunk_r11 */
SEQ(fi_seq_kcfi_caller_jmp, "kcfi_caller_jmp", FI_KCFI_CALLER_HASH,
    FI_KCFI_CALLER_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x03, 0x53, 0xf1,
    0x74, 0x02,
    0x0f, 0x0b,
    0x2e, 0xe9, 0x00, 0x00, 0x00, 0x00);

/*
 * FineIBT preamble, func-16:
 *  0:  f3 0f 1e fa		endbr64
 *  4:  41 81 <ea> 78 56 34 12	subl   $0x12345678, %r10d
 *  b:  75 f9			jne    6	; into the 0xEA byte: (bad), #UD
 *  d:  0f 1f 00		nopl   (%rax)
 */
SEQ(fi_seq_fineibt_preamble, "fineibt_preamble", FI_FINEIBT_PREAMBLE_HASH,
    FI_FINEIBT_PREAMBLE_UD,
    0xf3, 0x0f, 0x1e, 0xfa,
    0x41, 0x81, 0xea, 0x78, 0x56, 0x34, 0x12,
    0x75, 0xf9,
    0x0f, 0x1f, 0x00);

/*
 * FineIBT caller, call-site bytes 0..13:
 *  0:  41 ba 78 56 34 12	movl   $0x12345678, %r10d
 *  6:  4d 8d 5b f0		lea    -0x10(%r11), %r11
 *  a:  0f 1f 40 00		nopl   0x0(%rax)
 */
SEQ(fi_seq_fineibt_caller, "fineibt_caller", FI_FINEIBT_CALLER_HASH, -1,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x4d, 0x8d, 0x5b, 0xf0,
    0x0f, 0x1f, 0x40, 0x00);

/*
 * The de-thunked call, call-site bytes 14..19:
 *  e:  41 ff d3		call   *%r11
 * 11:  0f 1f 00		nopl   (%rax)
 */
SEQ(fi_seq_indirect_call, "indirect_call", -1, -1,
    0x41, 0xff, 0xd3, 0x0f, 0x1f, 0x00);

/*  e:  41 ff e3		jmp    *%r11
 * 11:  0f 1f 00		nopl   (%rax)
 */
SEQ(fi_seq_indirect_jmp, "indirect_jmp", -1, -1,
    0x41, 0xff, 0xe3, 0x0f, 0x1f, 0x00);

/*
 * Paranoid FineIBT caller, all 20 bytes:
 *  0:  41 ba 78 56 34 12	movl   $0x12345678, %r10d
 *  6:  45 3b 53 f7		cmpl   -0x9(%r11), %r10d
 *  a:  4d 8d 5b <f0>		lea    -0x10(%r11), %r11
 *  e:  75 fd			jne    d	; f0 75 fd: lock jne, #UD
 * 10:  41 ff d3		call   *%r11
 * 13:  90			nop
 */
SEQ(fi_seq_paranoid_call, "paranoid_call", FI_PARANOID_HASH, FI_PARANOID_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x3b, 0x53, 0xf7,
    0x4d, 0x8d, 0x5b, 0xf0,
    0x75, 0xfd,
    0x41, 0xff, 0xd3,
    0x90);

/* The same as a tail call; 10: 41 ff e3  jmp *%r11 */
SEQ(fi_seq_paranoid_jmp, "paranoid_jmp", FI_PARANOID_HASH, FI_PARANOID_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x3b, 0x53, 0xf7,
    0x4d, 0x8d, 0x5b, 0xf0,
    0x75, 0xfd,
    0x41, 0xff, 0xe3,
    0x90);

/* FineIBT-BHI, preamble byte b:  e8 rel32  call __bhi_args[arity] */
SEQ(fi_seq_bhi_call, "bhi_call", -1, -1, 0xe8, 0x00, 0x00, 0x00, 0x00);

/*
 * FineIBT-BHI arity 1 inline, preamble bytes b..13 (runs into func+0..3):
 *  b:  49 0f 45 fa		cmovne %r10, %rdi
 *  f:  75 f5			jne    6
 * 11:  0f 1f 00		nopl   (%rax)
 * func+0 then reads f5 0f 1f 00: cmc; nopl (%rax).
 */
SEQ(fi_seq_arity1_inline, "arity1_inline", -1, -1,
    0x49, 0x0f, 0x45, 0xfa,
    0x75, 0xf5,
    0x0f, 0x1f, 0x00);

/* f3 0f 1e fa		endbr64 */
SEQ(fi_seq_endbr64, "endbr64", -1, -1, 0xf3, 0x0f, 0x1e, 0xfa);
/* f3 0f 1e fb		endbr32 */
SEQ(fi_seq_endbr32, "endbr32", -1, -1, 0xf3, 0x0f, 0x1e, 0xfb);
/* 66 0f 1f 00		nopw   (%rax): the poisoned ENDBR at func+0 */
SEQ(fi_seq_endbr_poison, "endbr_poison", -1, -1, 0x66, 0x0f, 0x1f, 0x00);
/* f5 0f 1f 00		cmc; nopl (%rax): func+0 under the arity-1 inline */
SEQ(fi_seq_bhi_magic, "bhi_magic", -1, -1, 0xf5, 0x0f, 0x1f, 0x00);
/* eb 0c		jmp.d8 +12: cfi=off, over a caller's check */
SEQ(fi_seq_caller_off, "caller_off", -1, -1, 0xeb, 0x0c);
/* 2e e8 rel32		cs call __x86_indirect_thunk_r11 */
SEQ(fi_seq_thunk_call, "thunk_call", -1, -1, 0x2e, 0xe8, 0, 0, 0, 0);
/* 2e e9 rel32		cs jmp __x86_indirect_thunk_r11 */
SEQ(fi_seq_thunk_jmp, "thunk_jmp", -1, -1, 0x2e, 0xe9, 0, 0, 0, 0);

/* ------------------------------------------------ the v6.18 set's forms */

/*
 * v6.18 FineIBT preamble, func-16, in its userspace form (hash in %r10d,
 * not %eax: see docs/sequences.md). The jne is forward and not-taken
 * hinted (2e); the two further CS prefixes pad it to end at func+0:
 *  0:  f3 0f 1e fa		endbr64
 *  4:  41 81 ea 78 56 34 12	subl   $0x12345678, %r10d
 *  b:  2e 2e 2e 75 03		jne,pn 13	; func+3: the UDB of the poison
 */
SEQ(fi_seq_v618_preamble, "v618_preamble", FI_FINEIBT_PREAMBLE_HASH, -1,
    0xf3, 0x0f, 0x1e, 0xfa,
    0x41, 0x81, 0xea, 0x78, 0x56, 0x34, 0x12,
    0x2e, 0x2e, 0x2e, 0x75, 0x03);

/*
 * v6.18 poison, func+0, written with the preamble (its jne needs it):
 *  0:  0f 1f 40 <d6>		nopl   -0x2a(%rax)	; d6 alone: UDB, #UD
 */
SEQ(fi_seq_v618_poison, "v618_poison", -1, 3, 0x0f, 0x1f, 0x40, 0xd6);

/*
 * Linux 7.3's kCFI caller: the failure branch is the not-taken one.
 *  0:  41 ba 78 56 34 12	movl   $0x12345678, %r10d	; -hash
 *  6:  45 03 53 f1		addl   -0xf(%r11), %r10d
 *  a:  75 01			jne    d	; into the d6 of the test: UDB
 *  c:  a8 d6			testb  $0xd6, %al	; flags only
 *  e:  2e e8 00 00 00 00	cs call __x86_indirect_thunk_r11
 */
SEQ(fi_seq_v618_kcfi_caller, "v618_kcfi_caller", FI_KCFI_CALLER_HASH,
    FI_V618_KCFI_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x03, 0x53, 0xf1,
    0x75, 0x01,
    0xa8, 0xd6,
    0x2e, 0xe8, 0x00, 0x00, 0x00, 0x00);

/* The same as a tail call: e: 2e e9 rel32 */
SEQ(fi_seq_v618_kcfi_caller_jmp, "v618_kcfi_caller_jmp", FI_KCFI_CALLER_HASH,
    FI_V618_KCFI_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x03, 0x53, 0xf1,
    0x75, 0x01,
    0xa8, 0xd6,
    0x2e, 0xe9, 0x00, 0x00, 0x00, 0x00);

/*
 * The de-thunked call padded with CS prefixes instead of a NOP:
 *  e:  2e 2e 2e 41 ff d3	cs cs cs call *%r11
 */
SEQ(fi_seq_v618_indirect_call, "v618_indirect_call", -1, -1,
    0x2e, 0x2e, 0x2e, 0x41, 0xff, 0xd3);
/*  e:  2e 2e 2e 41 ff e3	cs cs cs jmp *%r11 */
SEQ(fi_seq_v618_indirect_jmp, "v618_indirect_jmp", -1, -1,
    0x2e, 0x2e, 0x2e, 0x41, 0xff, 0xe3);

/*
 * v6.18 paranoid caller, userspace form: v4's check (the hash stays in
 * %r10d, so the lea's f0 falls at +0xd with no CS prefix on the lea),
 * then the call padded by a CS prefix:
 *  0:  41 ba 78 56 34 12	movl   $0x12345678, %r10d
 *  6:  45 3b 53 f7		cmpl   -0x9(%r11), %r10d
 *  a:  4d 8d 5b <f0>		lea    -0x10(%r11), %r11
 *  e:  75 fd			jne    d	; lock jne: #UD
 * 10:  2e 41 ff d3		cs call *%r11
 */
SEQ(fi_seq_v618_paranoid_call, "v618_paranoid_call", FI_PARANOID_HASH,
    FI_PARANOID_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x3b, 0x53, 0xf7,
    0x4d, 0x8d, 0x5b, 0xf0,
    0x75, 0xfd,
    0x2e, 0x41, 0xff, 0xd3);

/* The same as a tail call; 10: 2e 41 ff e3  cs jmp *%r11 */
SEQ(fi_seq_v618_paranoid_jmp, "v618_paranoid_jmp", FI_PARANOID_HASH,
    FI_PARANOID_UD,
    0x41, 0xba, 0x78, 0x56, 0x34, 0x12,
    0x45, 0x3b, 0x53, 0xf7,
    0x4d, 0x8d, 0x5b, 0xf0,
    0x75, 0xfd,
    0x2e, 0x41, 0xff, 0xe3);

/* 2e		cs: the padding prefix of de-thunked calls in v6.18 */
SEQ(fi_seq_cs, "cs", -1, -1, 0x2e);

static const struct fi_set_forms fi_sets[FI_NSETS] = {
	[FI_SET_V4] = {
		.name = "v4",
		.preamble = &fi_seq_fineibt_preamble,
		.poison = &fi_seq_endbr_poison,
		.preamble_ud = FI_FINEIBT_PREAMBLE_UD,
		.kcfi_caller = { &fi_seq_kcfi_caller, &fi_seq_kcfi_caller_jmp },
		.kcfi_ud = FI_KCFI_CALLER_UD,
		.indirect = { &fi_seq_indirect_call, &fi_seq_indirect_jmp },
		.kcfi_indirect = { &fi_seq_v618_indirect_call,
				   &fi_seq_v618_indirect_jmp },
		.paranoid = { &fi_seq_paranoid_call, &fi_seq_paranoid_jmp },
		.arity1 = &fi_seq_arity1_inline,
	},
	[FI_SET_V618] = {
		.name = "v6.18",
		.preamble = &fi_seq_v618_preamble,
		.poison = &fi_seq_v618_poison,
		.poison_needed = true,
		.preamble_ud = FI_V618_PREAMBLE_UD,
		.kcfi_caller = { &fi_seq_v618_kcfi_caller,
				 &fi_seq_v618_kcfi_caller_jmp },
		.kcfi_ud = FI_V618_KCFI_UD,
		.indirect = { &fi_seq_v618_indirect_call,
			      &fi_seq_v618_indirect_jmp },
		.kcfi_indirect = { &fi_seq_v618_indirect_call,
				   &fi_seq_v618_indirect_jmp },
		.paranoid = { &fi_seq_v618_paranoid_call,
			      &fi_seq_v618_paranoid_jmp },
		/*
		 * No inline arity-1 form: with the 7-byte subl there is no
		 * room for cmovne + jne before func+0, so arity 1 calls its
		 * stub like every other arity.
		 */
		.arity1 = NULL,
		.cs_pad = true,
	},
};

const struct fi_set_forms *fi_set_forms(int set)
{
	if (set < 0 || set >= FI_NSETS)
		set = FI_SET_V4;
	return &fi_sets[set];
}

const char *fi_set_name(int set)
{
	return set >= 0 && set < FI_NSETS ? fi_sets[set].name : "?";
}

int fi_set_parse(const char *name)
{
	static const struct { const char *name; int set; } alias[] = {
		{ "v4", FI_SET_V4 }, { "v6.18", FI_SET_V618 },
		{ "v6_18", FI_SET_V618 }, { "v618", FI_SET_V618 },
	};

	for (size_t i = 0; name && i < sizeof(alias) / sizeof(alias[0]); i++)
		if (!strcmp(name, alias[i].name))
			return alias[i].set;
	return -1;
}

/* ff d0		call   *%rax	(ModRM 11 010 reg: d0+r for register r) */
SEQ(fi_seq_call_reg, "call_reg", -1, -1, 0xff, 0xd0);
/* ff e0		jmp    *%rax	(ModRM 11 100 reg: e0+r) */
SEQ(fi_seq_jmp_reg, "jmp_reg", -1, -1, 0xff, 0xe0);
/* 41			REX.B: the register operand is r8..r15 */
SEQ(fi_seq_rex_b, "rex_b", -1, -1, 0x41);

/* The recommended multi-byte NOPs, 1..4 bytes. */
SEQ(fi_seq_nop1, "nop1", -1, -1, 0x90);			/* nop */
SEQ(fi_seq_nop2, "nop2", -1, -1, 0x66, 0x90);		/* xchg %ax,%ax */
SEQ(fi_seq_nop3, "nop3", -1, -1, 0x0f, 0x1f, 0x00);	/* nopl (%rax) */
SEQ(fi_seq_nop4, "nop4", -1, -1, 0x0f, 0x1f, 0x40, 0x00); /* nopl 0(%rax) */

const struct fi_seq *const fi_seq_nops[FI_MAX_NOP + 1] = {
	NULL, &fi_seq_nop1, &fi_seq_nop2, &fi_seq_nop3, &fi_seq_nop4,
};

/*
 * 49 89 c3		mov    %rax, %r11: moves a JIT's call target into
 * r11 (REX.R and ModRM.reg select the source register).
 */
SEQ(fi_seq_mov_r11, "mov_r11", -1, -1, 0x49, 0x89, 0xc3);
#define FI_MOV_R11_REXR		0x04	/* REX.R: source is r8..r15 */
#define FI_MOV_R11_REG_SHIFT	3	/* ModRM.reg */

const struct fi_seq *const fi_seq_all[] = {
	&fi_seq_kcfi_preamble, &fi_seq_kcfi_caller, &fi_seq_kcfi_caller_jmp,
	&fi_seq_fineibt_preamble, &fi_seq_fineibt_caller,
	&fi_seq_indirect_call, &fi_seq_indirect_jmp,
	&fi_seq_paranoid_call, &fi_seq_paranoid_jmp,
	&fi_seq_bhi_call, &fi_seq_arity1_inline,
	&fi_seq_endbr64, &fi_seq_endbr32, &fi_seq_endbr_poison,
	&fi_seq_bhi_magic, &fi_seq_caller_off,
	&fi_seq_thunk_call, &fi_seq_thunk_jmp,
	&fi_seq_v618_preamble, &fi_seq_v618_poison,
	&fi_seq_v618_kcfi_caller, &fi_seq_v618_kcfi_caller_jmp,
	&fi_seq_v618_indirect_call, &fi_seq_v618_indirect_jmp,
	&fi_seq_v618_paranoid_call, &fi_seq_v618_paranoid_jmp,
	NULL,
};

/* ------------------------------------------------------------- encoders */

void fi_buf_init(struct fi_buf *b, void *mem, size_t cap, uint64_t ip)
{
	b->mem = mem;
	b->cap = cap;
	b->len = 0;
	b->ip = ip;
	b->err = 0;
	b->set = FI_SET_V4;
}

void fi_buf_init_set(struct fi_buf *b, void *mem, size_t cap, uint64_t ip,
		     int set)
{
	fi_buf_init(b, mem, cap, ip);
	if (set < 0 || set >= FI_NSETS)
		b->err = -EINVAL;
	else
		b->set = set;
}

static uint8_t *fi_buf_reserve(struct fi_buf *b, size_t n)
{
	uint8_t *p;

	if (b->err)
		return NULL;
	if (n > b->cap - b->len) {
		b->err = -ENOSPC;
		return NULL;
	}
	p = b->mem + b->len;
	b->len += n;
	return p;
}

void fi_emit_bytes(struct fi_buf *b, const void *bytes, size_t n)
{
	uint8_t *p = fi_buf_reserve(b, n);

	if (p)
		memcpy(p, bytes, n);
}

void fi_emit_seq(struct fi_buf *b, const struct fi_seq *s, uint32_t hash)
{
	uint8_t *p = fi_buf_reserve(b, s->len);

	if (!p)
		return;
	memcpy(p, s->bytes, s->len);
	if (s->hash >= 0)
		fi_store32(p + s->hash, hash);
}

/* The rel32 of a 4-byte displacement that ends at @end and reaches @target. */
static bool fi_rel32(uint64_t end, uint64_t target, int32_t *rel)
{
	int64_t d = (int64_t)(target - end);

	if (d < INT32_MIN || d > INT32_MAX)
		return false;
	*rel = (int32_t)d;
	return true;
}

void fi_emit_rel32(struct fi_buf *b, const struct fi_seq *s, uint64_t target)
{
	uint64_t here = b->ip + b->len;
	int32_t rel;
	uint8_t *p;

	if (b->err)
		return;
	if (!fi_rel32(here + s->len, target, &rel)) {
		b->err = -ERANGE;
		return;
	}
	p = fi_buf_reserve(b, s->len);
	if (!p)
		return;
	memcpy(p, s->bytes, s->len);
	fi_store32(p + s->len - 4, (uint32_t)rel);
}

void fi_emit_kcfi_preamble(struct fi_buf *b, uint32_t hash, int arity)
{
	size_t at = b->len;

	if (arity < 0 || arity > FI_MAX_ARITY) {
		if (!b->err)
			b->err = -EINVAL;
		return;
	}
	fi_emit_seq(b, &fi_seq_kcfi_preamble, hash);
	if (!b->err)
		b->mem[at] = (uint8_t)(fi_seq_kcfi_preamble.bytes[0] + arity);
}

void fi_emit_kcfi_caller(struct fi_buf *b, uint32_t hash, bool jmp,
			 uint64_t thunk)
{
	const struct fi_seq *s = fi_set_forms(b->set)->kcfi_caller[jmp];

	/* The check part (imm = -hash), then the rel32 call that ends it. */
	fi_emit_bytes(b, s->bytes, FI_KCFI_CALLER_CALL);
	if (!b->err)
		fi_store32(b->mem + b->len - FI_KCFI_CALLER_CALL + s->hash,
			   (uint32_t)-hash);
	fi_emit_rel32(b, jmp ? &fi_seq_thunk_jmp : &fi_seq_thunk_call, thunk);
}

void fi_emit_fineibt_preamble(struct fi_buf *b, uint32_t hash)
{
	fi_emit_seq(b, fi_set_forms(b->set)->preamble, hash);
}

void fi_emit_poison(struct fi_buf *b)
{
	fi_emit_seq(b, fi_set_forms(b->set)->poison, 0);
}

void fi_emit_fineibt_caller(struct fi_buf *b, uint32_t hash, bool jmp)
{
	fi_emit_seq(b, &fi_seq_fineibt_caller, hash);
	fi_emit_seq(b, fi_set_forms(b->set)->indirect[jmp], 0);
}

void fi_emit_paranoid_caller(struct fi_buf *b, uint32_t hash, bool jmp)
{
	fi_emit_seq(b, fi_set_forms(b->set)->paranoid[jmp], hash);
}

void fi_emit_bhi_tail(struct fi_buf *b, int arity, bool warn, uint64_t stubs)
{
	const struct fi_set_forms *f = fi_set_forms(b->set);
	const struct fi_seq *pre = f->preamble;

	if (arity < 0 || arity > FI_MAX_ARITY) {
		if (!b->err)
			b->err = -EINVAL;
		return;
	}
	if (arity == 0) {
		fi_emit_bytes(b, pre->bytes + FI_FINEIBT_PREAMBLE_BHI,
			      pre->len - FI_FINEIBT_PREAMBLE_BHI);
		return;
	}
	/* The inline form clobbers rdi unconditionally: not with warn. */
	if (arity == 1 && !warn && f->arity1) {
		fi_emit_seq(b, f->arity1, 0);
		return;
	}
	fi_emit_rel32(b, &fi_seq_bhi_call,
		      stubs + (uint64_t)arity * FI_BHI_SLOT_SIZE);
}

void fi_emit_nops(struct fi_buf *b, size_t n)
{
	while (n && !b->err) {
		size_t k = n > FI_MAX_NOP ? FI_MAX_NOP : n;

		fi_emit_seq(b, fi_seq_nops[k], 0);
		n -= k;
	}
}

void fi_emit_indirect(struct fi_buf *b, int reg, bool jmp, size_t size)
{
	const struct fi_seq *s = jmp ? &fi_seq_jmp_reg : &fi_seq_call_reg;
	size_t start = b->len, len;

	if (reg < 0 || reg > 15) {
		if (!b->err)
			b->err = -EINVAL;
		return;
	}
	/* v6.18 pads in front, with CS prefixes: still one instruction. */
	len = s->len + (reg >= 8);
	for (size_t i = len; fi_set_forms(b->set)->cs_pad && i < size; i++)
		fi_emit_seq(b, &fi_seq_cs, 0);
	if (reg >= 8)
		fi_emit_seq(b, &fi_seq_rex_b, 0);
	fi_emit_seq(b, s, 0);
	if (b->err)
		return;
	b->mem[b->len - 1] = (uint8_t)(s->bytes[s->len - 1] + (reg & 7));
	len = b->len - start;
	if (size > len)
		fi_emit_nops(b, size - len);
	else if (size && size < len)
		b->err = -ENOSPC;
}

void fi_emit_kcfi_check(struct fi_buf *b, uint32_t hash, bool off)
{
	const struct fi_seq *k = fi_set_forms(b->set)->kcfi_caller[0];
	size_t at = b->len;

	fi_emit_bytes(b, k->bytes, FI_KCFI_CALLER_CALL);
	if (b->err)
		return;
	fi_store32(b->mem + at + k->hash, (uint32_t)-hash);
	if (off)
		memcpy(b->mem + at, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
}

void fi_emit_mov_r11(struct fi_buf *b, int reg)
{
	const struct fi_seq *m = &fi_seq_mov_r11;
	size_t at = b->len;

	if (reg < 0 || reg > 15) {
		if (!b->err)
			b->err = -EINVAL;
		return;
	}
	if (reg == 11)
		return;
	fi_emit_seq(b, m, 0);
	if (b->err)
		return;
	if (reg & 8)
		b->mem[at] |= FI_MOV_R11_REXR;
	b->mem[at + 2] |= (uint8_t)((reg & 7) << FI_MOV_R11_REG_SHIFT);
}

/* ------------------------------------------------------------- matchers */

static uint64_t fi_load64u(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * @n bytes at @a equal those at @b: whole words, the last one overlapping
 * (every classification goes through here, once per site and pass).
 */
static inline __attribute__((always_inline))
bool fi_bytes_same(const uint8_t *a, const uint8_t *b, int n)
{
	if (n >= 8) {
		for (int i = 0; i + 8 < n; i += 8) {
			if (fi_load64u(a + i) != fi_load64u(b + i))
				return false;
		}
		return fi_load64u(a + n - 8) == fi_load64u(b + n - 8);
	}
	if (n >= 4)
		return fi_load32(a) == fi_load32(b) &&
		       fi_load32(a + n - 4) == fi_load32(b + n - 4);
	if (n >= 2)
		return a[0] == b[0] && a[1] == b[1] && a[n - 1] == b[n - 1];
	for (int i = 0; i < n; i++) {
		if (a[i] != b[i])
			return false;
	}
	return true;
}

/*
 * @p equals template @s in bytes [from, to), the hash excepted. Inlined:
 * with a template of this file and constant bounds it folds to a few
 * word compares.
 */
static inline __attribute__((always_inline))
bool fi_seq_range(const uint8_t *p, const struct fi_seq *s,
			 int from, int to)
{
	int h = s->hash;
	int lo_end, hi_start;

	if (h < 0 || h >= to || h + 4 <= from)
		return fi_bytes_same(p + from, s->bytes + from, to - from);
	lo_end = h;			/* [from, h) and [h + 4, to) */
	hi_start = h + 4;
	if (lo_end > from &&
	    !fi_bytes_same(p + from, s->bytes + from, lo_end - from))
		return false;
	return hi_start >= to ||
	       fi_bytes_same(p + hi_start, s->bytes + hi_start, to - hi_start);
}

/* fi_match_kcfi_preamble, inlined into the classifier too. */
static inline __attribute__((always_inline))
bool fi_kcfi_preamble_at(const uint8_t *p, uint32_t *hash, int *arity)
{
	uint8_t op = fi_seq_kcfi_preamble.bytes[0];

	if (p[0] < op || p[0] > op + FI_MAX_ARITY)
		return false;
	if (!fi_seq_range(p, &fi_seq_kcfi_preamble, 1, fi_seq_kcfi_preamble.len))
		return false;
	if (hash)
		*hash = fi_load32(p + FI_KCFI_PREAMBLE_HASH);
	if (arity)
		*arity = p[0] - op;
	return true;
}

bool fi_match_kcfi_preamble(const uint8_t *p, uint32_t *hash, int *arity)
{
	return fi_kcfi_preamble_at(p, hash, arity);
}

static uint64_t fi_rel32_target(const uint8_t *insn, int len, uint64_t ip)
{
	return ip + (uint64_t)len + (uint64_t)(int64_t)(int32_t)fi_load32(insn + len - 4);
}

/*
 * kCFI preamble as clang lays it out without patchable entries, func-6
 * (the hash 4 bytes before the function, where stock kCFI callers read it):
 *  0:  90			nop	; the last of the padding
 *  1:  b8 78 56 34 12		movl   $0x12345678, %eax	; b8+r: arity r
 */
bool fi_match_unprefixed_kcfi(const uint8_t *func)
{
	uint8_t op = fi_seq_kcfi_preamble.bytes[0];
	uint8_t nop = fi_seq_kcfi_preamble.bytes[fi_seq_kcfi_preamble.len - 1];

	return func[-6] == nop && func[-5] >= op && func[-5] <= op + FI_MAX_ARITY;
}

bool fi_match_stock_preamble(const uint8_t *p, uint32_t *hash, int *arity)
{
	const uint8_t op = fi_seq_kcfi_preamble.bytes[0];
	const uint8_t nop = fi_seq_kcfi_preamble.bytes[fi_seq_kcfi_preamble.len - 1];

	for (int i = 0; i < FI_STOCK_PREAMBLE_HASH - 1; i++) {
		if (p[i] != nop)
			return false;
	}
	if (p[FI_STOCK_PREAMBLE_HASH - 1] < op ||
	    p[FI_STOCK_PREAMBLE_HASH - 1] > op + FI_MAX_ARITY)
		return false;
	if (hash)
		*hash = fi_load32(p + FI_STOCK_PREAMBLE_HASH);
	if (arity)
		*arity = p[FI_STOCK_PREAMBLE_HASH - 1] - op;
	return true;
}

/* The stock site starting at @s, whose ud2 is at @s + @ud (12 or 13). */
static bool fi_stock_site_at(const uint8_t *s, int ud, size_t after,
			     struct fi_stock_site *out)
{
	const uint8_t *mov = fi_seq_kcfi_caller.bytes;	/* 41 ba */
	const uint8_t *off = fi_seq_caller_off.bytes;	/* eb */
	const uint8_t *add = fi_seq_kcfi_caller.bytes + FI_CALLER_MOVL_SIZE;
	const uint8_t *call = fi_seq_call_reg.bytes, *jmp = fi_seq_jmp_reg.bytes;
	const uint8_t *c = s + ud + 2, *je = s + ud - 2;
	uint8_t rex = s[6], modrm = s[8];
	int reg, disp_at = ud - 3, load;
	bool j, isoff;

	/* ud2 and the shortest call, before a byte after @ud is read */
	if (after < 4)
		return false;
	/* movl $imm32, %r10d, or "eb XX" to the call over it */
	isoff = s[0] == off[0] && s[1] == (uint8_t)(ud + 2 - 2);
	if (!isoff && (s[0] != mov[0] || s[1] != mov[1]))
		return false;
	/* addl d8(%reg), %r10d: REX.R (+B), 03, mod 01 reg 010 */
	if ((rex & ~1u) != (add[0] & ~1u) || s[7] != add[1] ||
	    (modrm & 0xf8) != (add[2] & 0xf8))
		return false;
	reg = (modrm & 7) | (rex & 1) << 3;
	/* rsp/r12 take a SIB byte (24: no index), everything else none */
	if (((modrm & 7) == 4) != (ud == 13) || (ud == 13 && s[9] != 0x24))
		return false;
	load = -(int)(int8_t)s[disp_at];
	if (load != FI_STOCK_LOAD_STOCK && load != FI_STOCK_LOAD_KCFI &&
	    load != FI_STOCK_LOAD_FINEIBT)
		return false;
	/* je .+2 (over the ud2), then the call through the same register */
	if (je[0] != 0x74 || je[1] != 0x02 || s[ud] != 0x0f || s[ud + 1] != 0x0b)
		return false;
	if (reg >= 8) {
		if (after < 5 || c[0] != fi_seq_rex_b.bytes[0])
			return false;
		c++;
	}
	if (c[0] != call[0])
		return false;
	if (c[1] == (uint8_t)(call[1] + (reg & 7)))
		j = false;
	else if (c[1] == (uint8_t)(jmp[1] + (reg & 7)))
		j = true;
	else
		return false;
	*out = (struct fi_stock_site){
		.hash = -fi_load32(s + FI_KCFI_CALLER_HASH), .reg = reg,
		.load = load, .disp_at = (uint8_t)disp_at, .ud = (uint8_t)ud,
		.len = (uint8_t)(c + 2 - s), .jmp = j, .off = isoff,
	};
	return true;
}

bool fi_match_stock_site(const uint8_t *p, size_t before, size_t after,
			 struct fi_stock_site *out)
{
	struct fi_stock_site tmp;

	if (!out)
		out = &tmp;
	for (int ud = FI_KCFI_CALLER_UD; ud <= FI_KCFI_CALLER_UD + 1; ud++) {
		if (before >= (size_t)ud &&
		    fi_stock_site_at(p - ud, ud, after, out))
			return true;
	}
	return false;
}

int fi_stock_site_write(uint8_t *w, const struct fi_stock_site *s,
			uint32_t hash, int load, bool off)
{
	const uint8_t *mov = fi_seq_kcfi_caller.bytes;

	if (load != FI_STOCK_LOAD_STOCK && load != FI_STOCK_LOAD_KCFI &&
	    load != FI_STOCK_LOAD_FINEIBT)
		return -EINVAL;
	if (off) {
		w[0] = fi_seq_caller_off.bytes[0];
		w[1] = (uint8_t)(s->ud + 2 - 2);	/* to the call */
	} else {
		w[0] = mov[0];
		w[1] = mov[1];
	}
	fi_store32(w + FI_KCFI_CALLER_HASH, -hash);
	w[s->disp_at] = (uint8_t)-load;
	return 0;
}

enum fi_preamble_form fi_classify_preamble(const uint8_t *p, uint64_t ip,
					   struct fi_preamble_info *out)
{
	const struct fi_seq *pre = &fi_seq_fineibt_preamble;
	const uint8_t *tail = p + FI_FINEIBT_PREAMBLE_BHI;
	struct fi_preamble_info info = { .form = FI_PRE_NONE, .arity = -1 };
	int n = pre->len - FI_FINEIBT_PREAMBLE_BHI;

	const struct fi_seq *v618 = &fi_seq_v618_preamble;

	if (fi_kcfi_preamble_at(p, &info.hash, &info.arity)) {
		info.form = FI_PRE_KCFI;
	} else if (fi_seq_range(p, pre, 0, FI_FINEIBT_PREAMBLE_BHI)) {
		/* Both sets share bytes 0..b; func+0 tells them apart. */
		info.hash = fi_load32(p + FI_FINEIBT_PREAMBLE_HASH);
		if (fi_load32(p + FI_PREAMBLE_SIZE) == FI_V618_POISON_VAL)
			info.set = FI_SET_V618;
		if (!memcmp(tail, pre->bytes + FI_FINEIBT_PREAMBLE_BHI, n)) {
			info.form = FI_PRE_FINEIBT;
			info.arity = 0;
			info.set = FI_SET_V4;
		} else if (!memcmp(tail, v618->bytes + FI_FINEIBT_PREAMBLE_BHI, n) &&
			   info.set == FI_SET_V618) {
			info.form = FI_PRE_FINEIBT;
			info.arity = 0;
		} else if (tail[0] == fi_seq_bhi_call.bytes[0]) {
			info.form = FI_PRE_FINEIBT_BHI;
			info.bhi_target = fi_rel32_target(tail, fi_seq_bhi_call.len,
							  ip + FI_FINEIBT_PREAMBLE_BHI);
		} else if (!memcmp(tail, fi_seq_arity1_inline.bytes,
				   fi_seq_arity1_inline.len)) {
			info.form = FI_PRE_FINEIBT_ARITY1;
			info.arity = 1;
			info.set = FI_SET_V4;
		}
	}
	if (out)
		*out = info;
	return info.form;
}

bool fi_any_kcfi_preamble(const uint64_t *funcs, size_t n)
{
	const uint8_t op = fi_seq_kcfi_preamble.bytes[0];
	const uint8_t endbr = fi_seq_fineibt_preamble.bytes[0];

	for (size_t i = 0; i < n; i++) {
		const uint8_t *f = (const uint8_t *)(uintptr_t)funcs[i];
		const uint8_t *p = f - FI_PREAMBLE_SIZE;

		/* Every form fi_classify_preamble knows starts with the
		 * kCFI movl or the FineIBT preamble's first byte (its hash
		 * comes later): the rest of it only for those. */
		if (((p[0] >= op && p[0] <= op + FI_MAX_ARITY) || p[0] == endbr) &&
		    fi_classify_preamble(p, funcs[i] - FI_PREAMBLE_SIZE, NULL) !=
			    FI_PRE_NONE)
			return true;
		/* Stock -fsanitize=kcfi alone: the runtime reads the file,
		 * which tells it to say why the module stays as compiled. */
		if (fi_match_unprefixed_kcfi(f))
			return true;
	}
	return false;
}

uint32_t fi_decode_caller_hash(const uint8_t *p)
{
	const uint8_t *mov = fi_seq_kcfi_caller.bytes;
	const uint8_t *off = fi_seq_caller_off.bytes;

	if ((p[0] == mov[0] && p[1] == mov[1]) ||
	    (p[0] == off[0] && p[1] == off[1]))
		return -fi_load32(p + FI_KCFI_CALLER_HASH);
	return 0;
}

bool fi_decode_thunk_call(const uint8_t *p, uint64_t ip, uint64_t *target,
			  bool *jmp)
{
	const struct fi_seq *c = &fi_seq_thunk_call, *j = &fi_seq_thunk_jmp;

	if (p[0] != c->bytes[0])
		return false;
	if (p[1] == c->bytes[1])
		*jmp = false;
	else if (p[1] == j->bytes[1])
		*jmp = true;
	else
		return false;
	*target = fi_rel32_target(p, c->len, ip);
	return true;
}

bool fi_match_thunk_call(const uint8_t *p, uint64_t ip, uint64_t thunk,
			 bool *jmp)
{
	uint64_t target;
	bool is_jmp;

	if (!fi_decode_thunk_call(p, ip, &target, &is_jmp) || target != thunk)
		return false;
	if (jmp)
		*jmp = is_jmp;
	return true;
}

bool fi_match_coarse_thunk(const uint8_t *p, size_t avail, uint64_t ip,
			   int reg, uint64_t *slot)
{
	/* scratch: r11 (modrm reg 3), or r10 (2) for the r11 thunk */
	const uint8_t sr = reg == 11 ? 2 : 3;
	const uint8_t test[] = { 0x4d, 0x85, (uint8_t)(0xc0 | sr << 3 | sr) };
	const uint8_t jmp_s[] = { 0x41, 0xff, (uint8_t)(0xe0 | sr) };
	uint32_t want = (uint32_t)reg * FI_COARSE_STRIDE, imm;
	size_t at = 12, end;
	bool r11 = reg == 11;

	/* the r11 thunk: push %r10 first, pop %r10 before its last jmp */
	if (r11) {
		if (avail < 2 || p[0] != 0x41 || p[1] != 0x52)
			return false;
		p += 2;
		ip += 2;
		avail -= 2;
	}
	if (reg < 0 || reg > 15 || avail < 18 || p[0] != 0x4c ||
	    (p[1] != 0x8b && p[1] != 0x8d) || p[2] != (0x05 | sr << 3) ||
	    memcmp(p + 7, test, 3) || p[10] != 0x74)
		return false;
	if (p[12] == 0x49 && p[13] == 0x83 && p[14] == (0xc0 | sr)) {
		imm = p[15];
		at += 4;
	} else if (p[12] == 0x49 && p[13] == 0x81 && p[14] == (0xc0 | sr) &&
		   avail >= 22) {
		imm = fi_load32(p + 15);
		at += 7;
	} else {
		return false;
	}
	end = at + 3;
	if (imm != want || avail < end + 2 + (reg >= 8) + 2 * r11 ||
	    memcmp(p + at, jmp_s, 3) || p[11] != end - 12)
		return false;
	if (r11) {
		if (p[end] != 0x41 || p[end + 1] != 0x5a)
			return false;
		end += 2;
	}
	if (reg >= 8 ? (p[end] != 0x41 || p[end + 1] != 0xff ||
			p[end + 2] != 0xe0 + reg - 8) :
		       (p[end] != 0xff || p[end + 1] != 0xe0 + reg))
		return false;
	if (slot)
		*slot = p[1] == 0x8b ? ip + 7 + (uint64_t)(int64_t)(int32_t)fi_load32(p + 3) : 0;
	return true;
}

/*
 * The thunk call at the end of a kCFI-shaped call site: its form and
 * target. This and the two below are inlined into the two call-site
 * matchers: every call site goes through them at each start-up.
 */
static inline __attribute__((always_inline))
bool fi_match_site_call(const uint8_t *p, uint64_t ip,
			       struct fi_caller_info *info)
{
	const uint8_t *c = p + FI_KCFI_CALLER_CALL;

	if (c[0] != fi_seq_thunk_call.bytes[0])
		return false;
	if (c[1] != fi_seq_thunk_call.bytes[1] && c[1] != fi_seq_thunk_jmp.bytes[1])
		return false;
	info->jmp = c[1] == fi_seq_thunk_jmp.bytes[1];
	info->thunk = fi_rel32_target(c, fi_seq_thunk_call.len,
				      ip + FI_KCFI_CALLER_CALL);
	return true;
}

/* A de-thunked call/jmp *%r11 (+ nop3) at @c: thunk left 0. */
static bool fi_match_direct_call(const uint8_t *c, struct fi_caller_info *info)
{
	for (int set = 0; set < FI_NSETS; set++) {
		for (int jmp = 0; jmp < 2; jmp++) {
			const struct fi_seq *ind = fi_sets[set].indirect[jmp];

			if (memcmp(c, ind->bytes, ind->len))
				continue;
			info->jmp = jmp;
			info->thunk = 0;
			if (set != FI_SET_V4)
				info->set = set;
			return true;
		}
	}
	return false;
}

/*
 * Bytes 2..13 of a kCFI caller (hash excepted, the first two bytes left
 * to the caller: movl or eb 0c): the compiler's je/ud2 or v6.18's jne/test.
 */
static inline __attribute__((always_inline))
bool fi_match_kcfi_check(const uint8_t *p, struct fi_caller_info *info)
{
	const int from = fi_seq_caller_off.len, to = FI_KCFI_CALLER_CALL;

	for (int set = 0; set < FI_NSETS; set++) {
		const struct fi_seq *t = fi_sets[set].kcfi_caller[0];

		/* the usual layout: [2, 14) less the hash is one word */
		if (from == FI_KCFI_CALLER_HASH && t->hash == FI_KCFI_CALLER_HASH &&
		    to - FI_KCFI_CALLER_HASH - 4 == 8) {
			if (fi_load64u(p + to - 8) != fi_load64u(t->bytes + to - 8))
				continue;
		} else if (!fi_seq_range(p, t, from, to)) {
			continue;
		}
		{
			if (set != FI_SET_V4)
				info->set = set;
			return true;
		}
	}
	return false;
}

/* A paranoid caller of either set: its set and whether a tail call. */
static bool fi_match_paranoid(const uint8_t *p, struct fi_caller_info *info)
{
	for (int set = 0; set < FI_NSETS; set++) {
		for (int jmp = 0; jmp < 2; jmp++) {
			if (!fi_seq_range(p, fi_sets[set].paranoid[jmp], 0,
					  FI_CALLSITE_SIZE))
				continue;
			info->jmp = jmp;
			info->set = set;
			return true;
		}
	}
	return false;
}

static enum fi_caller_form fi_caller_none(struct fi_caller_info *out)
{
	if (out)
		*out = (struct fi_caller_info){ .form = FI_CALL_NONE };
	return FI_CALL_NONE;
}

/* The kCFI forms (KCFI, OFF) of fi_classify_caller, filling @info. */
static inline __attribute__((always_inline))
enum fi_caller_form fi_kcfi_caller(const uint8_t *p, uint64_t ip,
				   struct fi_caller_info *info)
{
	const struct fi_seq *k = &fi_seq_kcfi_caller;
	const struct fi_seq *off = &fi_seq_caller_off;
	int set = info->set;

	/* kCFI check, live (41 ba) or jumped over (eb 0c) */
	if (!fi_match_site_call(p, ip, info) &&
	    !fi_match_direct_call(p + FI_KCFI_CALLER_CALL, info))
		return FI_CALL_NONE;
	/* Both sets end a kCFI caller with the CS-padded call: its set is
	 * the check's (fi_match_kcfi_check), whatever the call looks like. */
	info->set = set;
	if (fi_seq_range(p, k, 0, off->len))
		info->form = FI_CALL_KCFI;
	else if (!memcmp(p, off->bytes, off->len))
		info->form = FI_CALL_OFF;
	else
		return FI_CALL_NONE;
	info->hash = -fi_load32(p + FI_KCFI_CALLER_HASH);
	return info->form;
}

enum fi_caller_form fi_match_kcfi_caller(const uint8_t *p, uint64_t ip,
					 struct fi_caller_info *out)
{
	out->form = FI_CALL_NONE;
	out->set = 0;
	if (!fi_match_kcfi_check(p, out) || !fi_kcfi_caller(p, ip, out))
		return out->form = FI_CALL_NONE;
	return out->form;
}

enum fi_caller_form fi_classify_caller(const uint8_t *p, uint64_t ip,
				       struct fi_caller_info *out)
{
	struct fi_caller_info info = { .form = FI_CALL_NONE };

	if (fi_match_kcfi_check(p, &info)) {
		if (!fi_kcfi_caller(p, ip, &info))
			return fi_caller_none(out);
	} else if (fi_seq_range(p, &fi_seq_fineibt_caller, 0, FI_FINEIBT_CALLER_SIZE)) {
		const uint8_t *c = p + FI_FINEIBT_CALLER_SIZE;

		info.hash = fi_load32(p + FI_FINEIBT_CALLER_HASH);
		if (fi_match_direct_call(c, &info)) {
			info.form = FI_CALL_FINEIBT;
		} else if (fi_match_site_call(p, ip, &info)) {
			info.form = FI_CALL_FINEIBT_THUNK;
		} else {
			return fi_caller_none(out);
		}
	} else if (fi_match_paranoid(p, &info)) {
		info.form = FI_CALL_PARANOID;
		info.hash = fi_load32(p + FI_PARANOID_HASH);
	} else {
		return fi_caller_none(out);
	}
	if (out)
		*out = info;
	return info.form;
}

/* ----------------------------------------------------------- #UD decode */

enum fi_ud_kind fi_decode_ud(const uint8_t *p, size_t avail, int *len)
{
	const uint8_t ud2_0 = fi_seq_kcfi_caller.bytes[FI_KCFI_CALLER_UD];
	const uint8_t ud2_1 = fi_seq_kcfi_caller.bytes[FI_KCFI_CALLER_UD + 1];
	const uint8_t ea = fi_seq_fineibt_preamble.bytes[FI_FINEIBT_PREAMBLE_UD];
	const uint8_t lock = fi_seq_paranoid_call.bytes[FI_PARANOID_UD];
	const uint8_t udb = fi_seq_v618_poison.bytes[fi_seq_v618_poison.ud];

	if (avail >= 2 && p[0] == ud2_0 && p[1] == ud2_1) {
		*len = 2;
		return FI_UD_UD2;
	}
	if (avail >= 1 && p[0] == ea) {
		*len = 1;
		return FI_UD_EA;
	}
	if (avail >= 3 && p[0] == lock && (p[1] & 0xf0) == 0x70) {
		*len = 3;
		return FI_UD_LOCK_JCC;
	}
	if (avail >= 1 && p[0] == udb) {
		*len = 1;
		return FI_UD_UDB;
	}
	*len = 0;
	return FI_UD_NONE;
}

const char *fi_arity_reg_name(int arity)
{
	static const char *const names[FI_MAX_ARITY + 1] = {
		"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
	};

	if (arity < 0 || arity > FI_MAX_ARITY)
		return "?";
	return names[arity];
}

/* ---------------------------------------- foreign targets (src/interpose/foreign.c) */

static const uint8_t fi_fven_head[] = {
	0xf3, 0x0f, 0x1e, 0xfa,			/* endbr64 */
	0xeb, 0x0a,				/* jmp 16 */
};
static const uint8_t fi_fven_entry[] = {
	0xf3, 0x0f, 0x1e, 0xfa,			/* endbr64 */
	0xff, 0x25, 0x06, 0x00, 0x00, 0x00,	/* jmp *32(%rip) */
};
#define FI_FVEN_PTR	32

void fi_emit_foreign_veneer(uint8_t slot[FI_FVEN_SLOT], uint64_t fn)
{
	memset(slot, 0xcc, FI_FVEN_SLOT);
	memcpy(slot, fi_fven_head, sizeof(fi_fven_head));
	memcpy(slot + FI_FVEN_ENTRY, fi_fven_entry, sizeof(fi_fven_entry));
	memcpy(slot + FI_FVEN_PTR, &fn, sizeof(fn));
}

int fi_emit_typed_veneer(uint8_t slot[FI_FVEN_SLOT], uint64_t fn,
			 uint32_t hash, int arity, bool fineibt, int set)
{
	struct fi_buf b;

	fi_emit_foreign_veneer(slot, fn);
	fi_buf_init_set(&b, slot, FI_FVEN_ENTRY + 4, 0, set);
	if (fineibt) {
		fi_emit_fineibt_preamble(&b, hash);
		if (fi_set_forms(set)->poison_needed)
			fi_emit_poison(&b);
		else
			fi_emit_seq(&b, &fi_seq_endbr64, 0);
	} else {
		fi_emit_kcfi_preamble(&b, hash, arity);
		fi_emit_seq(&b, &fi_seq_endbr64, 0);
	}
	return b.err;
}

bool fi_match_typed_veneer(const uint8_t slot[FI_FVEN_SLOT], uint64_t *fn,
			   uint32_t *hash)
{
	struct fi_preamble_info info;

	if (memcmp(slot + FI_FVEN_ENTRY + 4, fi_fven_entry + 4,
		   sizeof(fi_fven_entry) - 4) ||
	    fi_classify_preamble(slot, 0, &info) == FI_PRE_NONE)
		return false;
	if (fn)
		memcpy(fn, slot + FI_FVEN_PTR, sizeof(*fn));
	if (hash)
		*hash = info.hash;
	return true;
}

/* The check each stub repeats after the site's movl: kcfi, paranoid. */
static const uint8_t fi_fstub_kcfi_check[] = {
	0x45, 0x03, 0x53, 0xf1,			/* addl -15(%r11), %r10d */
	0x74, 0x1c,				/* je 40 */
};
static const uint8_t fi_fstub_paranoid_check[] = {
	0x45, 0x3b, 0x53, 0xf7,			/* cmpl -9(%r11), %r10d */
	0x74, 0x25,				/* je 49 */
};
_Static_assert(sizeof(fi_fstub_kcfi_check) == sizeof(fi_fstub_paranoid_check),
	       "both checks end at the same offset of the stub");
/* At 12: r11 a veneer entry? (fail offsets patched per kind) */
static const uint8_t fi_fstub_range[] = {
	0x49, 0xba, 0, 0, 0, 0, 0, 0, 0, 0,	/* movabs $-entry0, %r10 */
	0x4d, 0x01, 0xda,			/* add %r11, %r10 */
	0x41, 0xf6, 0xc2, FI_FVEN_SLOT - 1,	/* test $63, %r10b */
	0x75, 0x00,				/* jne fail */
	0x49, 0x81, 0xfa, 0, 0, 0, 0,		/* cmp $size, %r10 */
	0x73, 0x00,				/* jae fail */
};
static const uint8_t fi_fstub_lea[] = { 0x4d, 0x8d, 0x5b, 0xf0 };

bool fi_emit_site_jmp(uint8_t out[5], uint64_t site_ip, uint64_t stub_ip)
{
	int64_t rel = (int64_t)(stub_ip - (site_ip + 5));

	if (rel != (int32_t)rel)
		return false;
	out[0] = 0xe9;
	fi_store32(out + 1, (uint32_t)rel);
	return true;
}

bool fi_decode_site_jmp(const uint8_t *p, uint64_t ip, uint64_t *target)
{
	if (p[0] != 0xe9)
		return false;
	*target = ip + 5 + (uint64_t)(int64_t)(int32_t)fi_load32(p + 1);
	return true;
}

size_t fi_emit_foreign_stub(uint8_t out[FI_FSTUB_SIZE], const uint8_t *site,
			    uint64_t site_ip, uint64_t stub_ip, bool paranoid,
			    uint64_t ven_entry0, uint32_t ven_size)
{
	const uint8_t *mov = fi_seq_kcfi_caller.bytes;
	size_t n = 0, fail, range;
	uint64_t neg = 0 - ven_entry0;

	if (site[0] != mov[0] || site[1] != mov[1])
		return 0;
	memset(out, 0xcc, FI_FSTUB_SIZE);
	memcpy(out, site, FI_CALLER_MOVL_SIZE);
	n = FI_CALLER_MOVL_SIZE;
	memcpy(out + n, paranoid ? fi_fstub_paranoid_check : fi_fstub_kcfi_check,
	       sizeof(fi_fstub_kcfi_check));
	n += sizeof(fi_fstub_kcfi_check);
	range = n;
	memcpy(out + n, fi_fstub_range, sizeof(fi_fstub_range));
	memcpy(out + n + 2, &neg, 8);
	fi_store32(out + n + 22, ven_size);
	n += sizeof(fi_fstub_range);
	if (paranoid) {
		memcpy(out + n, fi_fstub_lea, sizeof(fi_fstub_lea));
		n += sizeof(fi_fstub_lea);
	}
	/* On to the call: kcfi site+14, paranoid site+16. */
	if (!fi_emit_site_jmp(out + n, stub_ip + n, site_ip + (paranoid ? 16 : 14)))
		return 0;
	n += 5;
	fail = n;
	out[range + 18] = (uint8_t)(fail - (range + 19));	/* jne fail */
	out[range + 27] = (uint8_t)(fail - (range + 28));	/* jae fail */
	memcpy(out + n, site, 6);				/* reload r10 */
	n += 6;
	if (!fi_emit_site_jmp(out + n, stub_ip + n, site_ip + 6))
		return 0;
	return n + 5;
}

/* ------------------------------------------- PLT entries (src/interpose/plt.c) */

static const uint8_t fi_plt_endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
static const uint8_t fi_plt_direct[] = {
	0x49, 0xbb, 0, 0, 0, 0, 0, 0, 0, 0,	/* movabs $target, %r11 */
	0x41, 0xff, 0xe3,			/* jmp *%r11 */
	0xcc, 0xcc, 0xcc,
};
#define FI_PLT_DIRECT_IMM	2

/* The rip-relative target of "[f2] ff /4 d32" or "[f2] ff /6 d32" at @p
 * (@ip), modrm @modrm (25: jmp, 35: push); its length in *@len, or 0. */
static bool fi_plt_riprel(const uint8_t *p, uint64_t ip, uint8_t modrm,
			  uint64_t *to, int *len)
{
	int n = p[0] == 0xf2 && modrm == 0x25;

	if (p[n] != 0xff || p[n + 1] != modrm)
		return false;
	*len = n + 6;
	*to = ip + (uint64_t)*len + (uint64_t)(int64_t)(int32_t)fi_load32(p + n + 2);
	return true;
}

/* "[f2] e9 r32" at @p (@ip): its target and length. */
static bool fi_plt_jmp32(const uint8_t *p, uint64_t ip, uint64_t *to, int *len)
{
	int n = p[0] == 0xf2;

	if (p[n] != 0xe9)
		return false;
	*len = n + 5;
	*to = ip + (uint64_t)*len + (uint64_t)(int64_t)(int32_t)fi_load32(p + n + 1);
	return true;
}

bool fi_match_plt0(const uint8_t *p, uint64_t ip, uint64_t got)
{
	uint64_t to;
	int n, m;

	if (!fi_plt_riprel(p, ip, 0x35, &to, &n) || to != got + 8)
		return false;
	return fi_plt_riprel(p + n, ip + (uint64_t)n, 0x25, &to, &m) &&
	       to == got + 16;
}

bool fi_match_plt_lazy(const uint8_t *p, uint64_t ip, bool ibt,
		       uint64_t *slot, uint32_t *k, uint64_t *plt0)
{
	int n = 0, m;

	*slot = 0;
	if (ibt) {
		if (memcmp(p, fi_plt_endbr, sizeof(fi_plt_endbr)))
			return false;
		n = sizeof(fi_plt_endbr);
	} else {
		/* Plain "ff 25": a bnd prefix here is another PLT layout. */
		if (p[0] != 0xff || !fi_plt_riprel(p, ip, 0x25, slot, &n))
			return false;
	}
	if (p[n] != 0x68)
		return false;
	*k = fi_load32(p + n + 1);
	n += 5;
	return fi_plt_jmp32(p + n, ip + (uint64_t)n, plt0, &m) &&
	       n + m <= FI_PLT_ENTRY;
}

bool fi_match_plt_sec(const uint8_t *p, uint64_t ip, uint64_t *slot)
{
	int n;

	if (memcmp(p, fi_plt_endbr, sizeof(fi_plt_endbr)))
		return false;
	return fi_plt_riprel(p + 4, ip + 4, 0x25, slot, &n);
}

void fi_emit_plt_direct(uint8_t out[FI_PLT_ENTRY], uint64_t target)
{
	memcpy(out, fi_plt_direct, FI_PLT_ENTRY);
	memcpy(out + FI_PLT_DIRECT_IMM, &target, sizeof(target));
}

bool fi_match_plt_direct(const uint8_t *p, uint64_t *target)
{
	if (memcmp(p, fi_plt_direct, FI_PLT_DIRECT_IMM) ||
	    memcmp(p + FI_PLT_DIRECT_IMM + 8, fi_plt_direct + FI_PLT_DIRECT_IMM + 8,
		   FI_PLT_ENTRY - FI_PLT_DIRECT_IMM - 8))
		return false;
	memcpy(target, p + FI_PLT_DIRECT_IMM, sizeof(*target));
	return true;
}

bool fi_emit_plt_sec_direct(uint8_t out[FI_PLT_ENTRY], uint64_t ip,
			    uint64_t lazy)
{
	memset(out, 0xcc, FI_PLT_ENTRY);
	memcpy(out, fi_plt_endbr, sizeof(fi_plt_endbr));
	return fi_emit_site_jmp(out + 4, ip + 4, lazy);
}

bool fi_match_plt_sec_direct(const uint8_t *p, uint64_t ip, uint64_t *lazy)
{
	for (int i = 9; i < FI_PLT_ENTRY; i++) {
		if (p[i] != 0xcc)
			return false;
	}
	return !memcmp(p, fi_plt_endbr, sizeof(fi_plt_endbr)) &&
	       fi_decode_site_jmp(p + 4, ip + 4, lazy);
}
