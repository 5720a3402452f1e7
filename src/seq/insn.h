/* SPDX-License-Identifier: MIT */
/*
 * The byte sequences of kCFI and FineIBT: one definition of each, with its
 * named offsets, plus bounds-checked encoders and strict matchers.
 *
 * Every other file (the passes, the trap decoder, the JIT emitter, the CLI
 * and the tests) goes through this interface; no other file spells an
 * opcode byte of these sequences.
 *
 * "func" below is a function's entry (its ENDBR); preambles sit at func-16.
 * Hash placeholders in the templates are 0x12345678.
 */
#ifndef FI_INSN_H
#define FI_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thunks.h"

/* ------------------------------------------------------------ geometry */

#define FI_PREAMBLE_SIZE	16	/* bytes before func that a preamble takes */
#define FI_CALLSITE_SIZE	20	/* a whole kCFI call site, check + call */
#define FI_MAX_ARITY		7	/* arity register numbers 0..7 */
#define FI_BHI_SLOT_SIZE	32	/* one __bhi_args[] slot */
/* movl $imm32,%r10d (41 ba imm32): the first instruction of the kCFI and
 * the paranoid caller, the one a foreign stub keeps (fi_emit_foreign_stub) */
#define FI_CALLER_MOVL_SIZE	6

/* kCFI preamble (func-16): b8+r imm32; 11 x nop */
#define FI_KCFI_PREAMBLE_HASH	1

/* kCFI call site: movl $-hash,%r10d; addl -15(%r11),%r10d; je; ud2; cs call */
#define FI_KCFI_CALLER_HASH	2	/* holds -hash */
#define FI_KCFI_CALLER_UD	12	/* the ud2; .kcfi_traps points here */
#define FI_KCFI_CALLER_CALL	14	/* the 6-byte cs call/jmp rel32 */
#define FI_KCFI_CALLER_LOAD	15	/* the callee's hash sits at target-15 */

/* FineIBT preamble (func-16) */
#define FI_FINEIBT_PREAMBLE_HASH 7
#define FI_FINEIBT_PREAMBLE_UD	6	/* the 0xEA byte, target of the jne */
#define FI_FINEIBT_PREAMBLE_BHI	11	/* the jne, or the BHI call, or cmovne */

/* FineIBT caller: replaces call-site bytes 0..13 */
#define FI_FINEIBT_CALLER_SIZE	14
#define FI_FINEIBT_CALLER_HASH	2

/* Paranoid caller: replaces all 20 bytes */
#define FI_PARANOID_HASH	2
#define FI_PARANOID_LOAD	9	/* cmpl -9(%r11): hash inside the preamble */
#define FI_PARANOID_UD		0xd	/* the f0 byte: LOCK Jcc.d8 */
#define FI_PARANOID_IND		0x10	/* the call/jmp *%r11 */

/*
 * The sequence sets (docs/sequences.md). FI_SET_V4 is the seeds' v4 series
 * (Linux 6.15); FI_SET_V618 is the kernel's newer set (v6.18 UDB preamble,
 * CS-prefix padding, Linux 7.3's kCFI jne/test form) in its userspace form:
 * the hash stays in %r10d, because %al carries the vector-register count of
 * a SysV variadic call and a matching "sub $hash, %eax" would zero it.
 */
enum fi_set {
	FI_SET_V4 = 0,
	FI_SET_V618,
	FI_NSETS,
};

/* v6.18: the jne of the preamble lands on func+3, the 0xD6 (UDB) byte of
 * the poison at func+0; a kCFI caller's jne lands on +13, the UDB byte of
 * its "test $0xd6, %al", one past the .kcfi_traps address. */
#define FI_V618_PREAMBLE_UD	(FI_PREAMBLE_SIZE + 3)
#define FI_V618_KCFI_UD		(FI_KCFI_CALLER_UD + 1)

/* The four-byte values an ENDBR test knows, as read little-endian. */
#define FI_ENDBR64_VAL		0xfa1e0ff3u
#define FI_ENDBR32_VAL		0xfb1e0ff3u
#define FI_POISON_VAL		0x001f0f66u	/* osp nopl (%rax) */
#define FI_BHI_MAGIC_VAL	0x001f0ff5u	/* cmc; nopl (%rax) */
#define FI_V618_POISON_VAL	0xd6401f0fu	/* nopl -0x2a(%rax) */

/* ------------------------------------------------------------ templates */

struct fi_seq {
	const char *name;
	const uint8_t *bytes;
	uint8_t len;
	int8_t hash;	/* offset of the imm32 hash, -1 if none */
	int8_t ud;	/* offset of the byte that raises #UD, -1 if none */
};

extern const struct fi_seq fi_seq_kcfi_preamble;
extern const struct fi_seq fi_seq_kcfi_caller;		/* call form, 20 bytes */
extern const struct fi_seq fi_seq_kcfi_caller_jmp;	/* tail-call form */
extern const struct fi_seq fi_seq_fineibt_preamble;
extern const struct fi_seq fi_seq_fineibt_caller;
extern const struct fi_seq fi_seq_indirect_call;	/* call *%r11; nop3 */
extern const struct fi_seq fi_seq_indirect_jmp;		/* jmp *%r11; nop3 */
extern const struct fi_seq fi_seq_paranoid_call;
extern const struct fi_seq fi_seq_paranoid_jmp;
extern const struct fi_seq fi_seq_bhi_call;		/* e8 rel32 */
extern const struct fi_seq fi_seq_arity1_inline;
extern const struct fi_seq fi_seq_endbr64;
extern const struct fi_seq fi_seq_endbr32;
extern const struct fi_seq fi_seq_endbr_poison;
extern const struct fi_seq fi_seq_bhi_magic;
extern const struct fi_seq fi_seq_caller_off;		/* eb 0c */
extern const struct fi_seq fi_seq_thunk_call;		/* 2e e8 rel32 */
extern const struct fi_seq fi_seq_thunk_jmp;		/* 2e e9 rel32 */
extern const struct fi_seq fi_seq_mov_r11;		/* mov %rax, %r11 (JIT) */
/* The v6.18 set's own forms (the others are shared with v4). */
extern const struct fi_seq fi_seq_v618_preamble;
extern const struct fi_seq fi_seq_v618_poison;		/* 0f 1f 40 d6 */
extern const struct fi_seq fi_seq_v618_kcfi_caller;	/* jne .+3; test $0xd6,%al */
extern const struct fi_seq fi_seq_v618_kcfi_caller_jmp;
extern const struct fi_seq fi_seq_v618_indirect_call;	/* cs cs cs call *%r11 */
extern const struct fi_seq fi_seq_v618_indirect_jmp;
extern const struct fi_seq fi_seq_v618_paranoid_call;	/* ... cs call *%r11 */
extern const struct fi_seq fi_seq_v618_paranoid_jmp;
extern const struct fi_seq fi_seq_cs;			/* 2e: CS-prefix padding */

/*
 * One set's choice of template for each form that differs between sets
 * (the kCFI preamble, the FineIBT caller, the BHI call and the ENDBRs are
 * common). arity1 is NULL when the set has no inline arity-1 form.
 */
struct fi_set_forms {
	const char *name;			/* "v4", "v6.18" */
	const struct fi_seq *preamble;		/* 16 bytes at func-16 */
	const struct fi_seq *poison;		/* func+0 */
	bool poison_needed;			/* the preamble traps inside it */
	int preamble_ud;			/* #UD byte, from func-16 */
	const struct fi_seq *kcfi_caller[2];	/* [jmp] */
	int kcfi_ud;				/* #UD byte of a kCFI caller */
	const struct fi_seq *indirect[2];	/* [jmp], the 6-byte call */
	/*
	 * [jmp], the call that ends a kcfi or off caller once de-thunked:
	 * CS-padded in both sets, so nothing runs after the call returns
	 * (v4's indirect[] form executes its trailing nop3 on every return).
	 * The set of a kCFI caller is told by its check, not by this call.
	 */
	const struct fi_seq *kcfi_indirect[2];
	const struct fi_seq *paranoid[2];	/* [jmp] */
	const struct fi_seq *arity1;
	bool cs_pad;				/* de-thunked calls: CS prefixes */
};

const struct fi_set_forms *fi_set_forms(int set);
/* "v4" / "v6.18" (also "v6_18", "618") -> FI_SET_*, or -1. */
int fi_set_parse(const char *name);
const char *fi_set_name(int set);
/*
 * De-thunking an unchecked call through __x86_indirect_thunk_<reg>: the
 * register forms (ModRM reg field 2 = call, 4 = jmp; r8..r15 take the REX.B
 * prefix) and the NOPs that pad the result to the 6 bytes of the thunk call.
 * Not listed in fi_seq_all (a template per register would be noise).
 */
extern const struct fi_seq fi_seq_call_reg;		/* ff d0+r */
extern const struct fi_seq fi_seq_jmp_reg;		/* ff e0+r */
extern const struct fi_seq fi_seq_rex_b;		/* 41 */
extern const struct fi_seq *const fi_seq_nops[];	/* [n]: n-byte NOP, 1..4 */
#define FI_MAX_NOP		4

/* All of the above, for tests and tools that walk them (NULL-terminated). */
extern const struct fi_seq *const fi_seq_all[];

/* ------------------------------------------------------------- encoders */

/*
 * A bounds-checked output buffer with a sticky error: the first failure
 * (-ENOSPC, -ERANGE for a rel32 out of reach, -EINVAL) is kept and every
 * later emit is a no-op, so callers check once at the end.
 * @ip is the run-time address that @mem will occupy (for rel32 operands).
 */
struct fi_buf {
	uint8_t *mem;
	size_t cap;
	size_t len;
	uint64_t ip;
	int err;
	int set;	/* FI_SET_*: the sequence set emitters write (v4) */
};

void fi_buf_init(struct fi_buf *b, void *mem, size_t cap, uint64_t ip);
/* fi_buf_init for sequence set @set (FI_SET_*; out of range: -EINVAL). */
void fi_buf_init_set(struct fi_buf *b, void *mem, size_t cap, uint64_t ip,
		     int set);
void fi_emit_bytes(struct fi_buf *b, const void *bytes, size_t n);
/* Emit template @s, with @hash at its hash offset when it has one. */
void fi_emit_seq(struct fi_buf *b, const struct fi_seq *s, uint32_t hash);
/* Emit @s (a rel32 form: thunk call/jmp, bhi call) reaching @target. */
void fi_emit_rel32(struct fi_buf *b, const struct fi_seq *s, uint64_t target);

void fi_emit_kcfi_preamble(struct fi_buf *b, uint32_t hash, int arity);
/* A whole kCFI call site for @hash, calling/jumping to @thunk. */
void fi_emit_kcfi_caller(struct fi_buf *b, uint32_t hash, bool jmp,
			 uint64_t thunk);
/* 16 bytes at func-16 (the set's); func+0 follows: fi_emit_poison. */
void fi_emit_fineibt_preamble(struct fi_buf *b, uint32_t hash);
/* The set's ENDBR poison for func+0 (v6.18: carries the preamble's UDB). */
void fi_emit_poison(struct fi_buf *b);
/* FineIBT caller + the de-thunked call (20 bytes in all). */
void fi_emit_fineibt_caller(struct fi_buf *b, uint32_t hash, bool jmp);
void fi_emit_paranoid_caller(struct fi_buf *b, uint32_t hash, bool jmp);
/*
 * The BHI tail of a FineIBT preamble (bytes 11..15, or 11..19 for the
 * arity-1 inline form, which overwrites func+0..+3 too): @arity 0 leaves
 * the plain jne; 1 without @warn is inline; otherwise a call to
 * @stubs + arity * 32. @b must be positioned at preamble+11.
 */
void fi_emit_bhi_tail(struct fi_buf *b, int arity, bool warn, uint64_t stubs);
/*
 * The check part of a kCFI call site (bytes 0..13, imm = -@hash), or with
 * @off its cfi=off form (eb 0c over the first two bytes). Followed by a
 * thunk call or, in generated code, fi_seq_indirect_call/jmp.
 */
void fi_emit_kcfi_check(struct fi_buf *b, uint32_t hash, bool off);
/* mov %<reg>, %r11 (x86 register number 0..15); nothing for r11 itself. */
void fi_emit_mov_r11(struct fi_buf *b, int reg);
/* @n bytes of NOPs, the fewest instructions that fill them. */
void fi_emit_nops(struct fi_buf *b, size_t n);
/*
 * "call *%reg" (or "jmp *%reg") for register number @reg (0 = rax .. 15 =
 * r15), padded with NOPs to @size bytes (0: no padding). For r11 and 6
 * bytes this is fi_seq_indirect_call / fi_seq_indirect_jmp exactly.
 */
void fi_emit_indirect(struct fi_buf *b, int reg, bool jmp, size_t size);

/* ------------------------------------------------------------- matchers */

static inline uint32_t fi_load32(const void *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

static inline void fi_store32(void *p, uint32_t v)
{
	__builtin_memcpy(p, &v, 4);
}

/*
 * endbr64, endbr32, the poison, or the arity-1 magic. Inline: discovery
 * and the passes ask it of every preamble.
 */
static inline bool fi_is_endbr_val(uint32_t v)
{
	if (v == FI_POISON_VAL || v == FI_BHI_MAGIC_VAL ||
	    v == FI_V618_POISON_VAL)
		return true;
	return v == FI_ENDBR64_VAL || v == FI_ENDBR32_VAL;
}

static inline bool fi_is_endbr(const void *p)
{
	return fi_is_endbr_val(fi_load32(p));
}

/* endbr64 and nothing else. */
static inline bool fi_exact_endbr(const void *p)
{
	return fi_load32(p) == FI_ENDBR64_VAL;
}

/* kCFI preamble at @p (16 bytes): its hash and arity register. */
bool fi_match_kcfi_preamble(const uint8_t *p, uint32_t *hash, int *arity);

/*
 * The 6 bytes before @func (readable) end like clang's kCFI preamble
 * without -fpatchable-function-entry: padding nop, then movl $hash, %reg
 * right before the function. Not a form the passes rewrite; recognised
 * so that such modules are diagnosed instead of silently skipped.
 */
bool fi_match_unprefixed_kcfi(const uint8_t *func);

/*
 * Stock kCFI (clang's -fsanitize=kcfi without the driver's flags,
 * docs/compat.md "Stock kCFI modules"). Its preamble is the function's
 * alignment padding ending in the movl, 16 bytes when functions are
 * 16-aligned, with the hash right before the function:
 *
 *   func-16: 90 x 11          (padding)
 *   func-5:  b8+r imm32       movl $hash, %e?x
 *
 * fi_match_stock_preamble(@p = func-16): those 16 bytes; the hash and the
 * arity register. Found only where a __cfi_<name> symbol says (never by
 * the pattern alone).
 */
#define FI_STOCK_PREAMBLE_HASH	12
bool fi_match_stock_preamble(const uint8_t *p, uint32_t *hash, int *arity);

/*
 * Its call site checks any register and calls through it:
 *
 *   0:  41 ba imm32           movl $-hash, %r10d     (eb XX: cfi=off)
 *   6:  44|45 03 5r [24] d8   addl d8(%reg), %r10d   (SIB for rsp/r12)
 *   +:  74 02                 je .+2
 *   +:  0f 0b                 ud2                    <- .kcfi_traps
 *   +:  [41] ff d0+r|e0+r     call/jmp *%reg
 *
 * d8 is -4 as compiled (-15 with -fpatchable-function-entry=11,11). The
 * bridge keeps the site and moves only its imm32 (the rehash) and d8:
 * -15 (FI_STOCK_LOAD_KCFI) where preambles are in kCFI form, -9
 * (FI_STOCK_LOAD_FINEIBT, where the FineIBT and BHI preambles hold the
 * hash) in the FineIBT modes; cfi=off jumps over the check with
 * "eb XX" to the call.
 */
#define FI_STOCK_LOAD_STOCK	4
#define FI_STOCK_LOAD_KCFI	FI_KCFI_CALLER_LOAD
#define FI_STOCK_LOAD_FINEIBT	FI_PARANOID_LOAD
#define FI_STOCK_SITE_MAX	18	/* the longest stock site */
struct fi_stock_site {
	uint32_t hash;		/* -imm32: the type hash it checks */
	int reg;		/* 0..15: the register it loads and calls */
	int load;		/* the hash is read at target - load */
	uint8_t disp_at;	/* offset of the d8 */
	uint8_t ud;		/* offset of the ud2 */
	uint8_t len;		/* the whole site, call included */
	bool jmp;		/* tail call */
	bool off;		/* eb XX over the check (cfi=off) */
};
/*
 * The stock site whose ud2 is at @ud (@p points there; @before readable
 * bytes before it, @after from it): its start is @ud - 12, or - 13 with a
 * SIB byte. False if the bytes are no stock site.
 */
bool fi_match_stock_site(const uint8_t *p, size_t before, size_t after,
			 struct fi_stock_site *out);
/*
 * @s's bytes (@w = the site's start, s->len bytes) for run-time @hash
 * (imm32 = -hash), the hash read at target - @load, and with @off its
 * cfi=off form. -EINVAL for a load no d8 holds.
 */
int fi_stock_site_write(uint8_t *w, const struct fi_stock_site *s,
			uint32_t hash, int load, bool off);

/* Forms a 16-byte preamble window can take once written. */
enum fi_preamble_form {
	FI_PRE_NONE = 0,	/* not a preamble we know */
	FI_PRE_KCFI,		/* compiler output */
	FI_PRE_FINEIBT,		/* plain FineIBT: jne into the 0xEA byte */
	FI_PRE_FINEIBT_BHI,	/* FineIBT with call __bhi_args[n] */
	FI_PRE_FINEIBT_ARITY1,	/* FineIBT with the inline cmovne %r10,%rdi */
};

struct fi_preamble_info {
	enum fi_preamble_form form;
	uint32_t hash;		/* the type hash as the check compares it */
	int arity;		/* kcfi: from the register; bhi: -1 unless known */
	uint64_t bhi_target;	/* FI_PRE_FINEIBT_BHI: the call's target */
	int set;		/* FineIBT forms: FI_SET_* they belong to */
};

/*
 * Classify the 20 bytes at func-16 .. func+3 (@p), placed at run-time
 * address @ip (needed to resolve the BHI call target).
 */
enum fi_preamble_form fi_classify_preamble(const uint8_t *p, uint64_t ip,
					   struct fi_preamble_info *out);

/*
 * Has one of the @n functions at run-time addresses @funcs (each with its
 * 16 bytes before and 4 after readable) a preamble fi_classify_preamble
 * knows, or stock kCFI's hash right before it (fi_match_unprefixed_kcfi)?
 * The test of the runtime's probe of modules without an index.
 */
bool fi_any_kcfi_preamble(const uint64_t *funcs, size_t n);

/* Forms a 20-byte call site can take. */
enum fi_caller_form {
	FI_CALL_NONE = 0,
	FI_CALL_KCFI,		/* compiler output */
	FI_CALL_OFF,		/* kCFI with eb 0c over its first two bytes */
	FI_CALL_FINEIBT,	/* FineIBT caller + call *%r11 */
	FI_CALL_FINEIBT_THUNK,	/* FineIBT caller, call still through thunk */
	FI_CALL_PARANOID,
};

struct fi_caller_info {
	enum fi_caller_form form;
	uint32_t hash;		/* the type hash (kcfi's -imm negated back) */
	bool jmp;		/* tail call */
	uint64_t thunk;		/* KCFI/OFF/FINEIBT_THUNK: the call's target;
				 * 0 for KCFI/OFF whose call is already
				 * direct (call/jmp *%r11, de-thunked) */
	int set;		/* FI_SET_V618 when a form only it writes
				 * (jne/test check, CS-padded call) is seen */
};

/* Classify the 20 bytes of a call site at @p, at run-time address @ip. */
enum fi_caller_form fi_classify_caller(const uint8_t *p, uint64_t ip,
				       struct fi_caller_info *out);
/*
 * Only its kCFI forms (what the passes rewrite): FI_CALL_KCFI or
 * FI_CALL_OFF with @out filled exactly as fi_classify_caller would, else
 * FI_CALL_NONE (also for the rewritten forms; @out's other fields then
 * undefined). The passes' per-site test, without the rest of the decode.
 */
enum fi_caller_form fi_match_kcfi_caller(const uint8_t *p, uint64_t ip,
					 struct fi_caller_info *out);

/*
 * The kernel's decode_caller_hash(): the type hash of a kCFI caller whose
 * first six bytes are "41 ba imm32" or the disabled "eb 0c imm32"; 0 if
 * neither.
 */
uint32_t fi_decode_caller_hash(const uint8_t *p);

/*
 * A module's checking __x86_indirect_thunk_<reg> (src/seq/thunks.S, the
 * coarse check; s = r11, or r10 when reg is r11; n = reg):
 *
 *   0:  4c 8b 1d rel32       mov slot(%rip), %s   (the GOT slot of
 *       4c 8d 1d rel32       lea check(%rip), %s   __fineibt_coarse; a link
 *                                                   that defines it: lea)
 *   7:  4d 85 db             test %s, %s
 *   a:  74 07 / 74 0a        jz the last jmp
 *   c:  49 83 c3 00          add $0, %s           (n = 0)
 *       49 81 c3 imm32       add $(n * FI_COARSE_STRIDE), %s
 *       41 ff e3             jmp *%s
 *       ff e0+n / 41 ff e0+n jmp *%reg
 *
 * The r11 thunk keeps r10: 41 52 (push %r10) first, and 41 5a (pop
 * %r10) right before its last jmp, where jz lands.
 * fi_match_coarse_thunk: @p (@avail bytes at @ip) is that thunk for
 * @reg; its GOT slot in *@slot (0 when the link made it a lea).
 */
#define FI_COARSE_THUNK_MAX	29
bool fi_match_coarse_thunk(const uint8_t *p, size_t avail, uint64_t ip,
			   int reg, uint64_t *slot);

/* @p (6 bytes at @ip) is "2e e8/e9 rel32" reaching @thunk. */
bool fi_match_thunk_call(const uint8_t *p, uint64_t ip, uint64_t thunk,
			 bool *jmp);

/* @p (6 bytes at @ip) is "2e e8/e9 rel32": its @target, and if a jmp. */
bool fi_decode_thunk_call(const uint8_t *p, uint64_t ip, uint64_t *target,
			  bool *jmp);

/* ----------------------------------------------------------- #UD decode */

enum fi_ud_kind {
	FI_UD_NONE = 0,
	FI_UD_UD2,		/* 0f 0b */
	FI_UD_EA,		/* ea (bad) */
	FI_UD_LOCK_JCC,		/* f0 7x d8 */
	FI_UD_UDB,		/* d6 (v6.18 set) */
};

/*
 * What kind of trapping instruction starts at @p (@avail readable bytes),
 * and its length in @len.
 */
enum fi_ud_kind fi_decode_ud(const uint8_t *p, size_t avail, int *len);

/* Name of an arity register ("eax", "ecx", ...). */
const char *fi_arity_reg_name(int arity);

/* ---------------------------------------- foreign targets (src/interpose/foreign.c) */

/*
 * A veneer slot for an uninstrumented function F (docs/compat.md). The
 * entry V is slot + FI_FVEN_ENTRY: FineIBT callers land at V - 16 and
 * every other caller at V; both take an ENDBR and jump to F, whose
 * address sits in the slot itself (the slot is never written again).
 *
 *   0:  f3 0f 1e fa          endbr64               (V-16)
 *   4:  eb 0a                jmp 16
 *   6:  cc x 10
 *   16: f3 0f 1e fa          endbr64               (V)
 *   20: ff 25 06 00 00 00    jmp *32(%rip)         -> F
 *   26: cc x 6
 *   32: F (8 bytes)
 *   40: cc x 24
 */
#define FI_FVEN_SLOT	64
#define FI_FVEN_ENTRY	16
/* The region every veneer is a slot of: 16384 veneers. */
#define FI_FVEN_REGION	(1ULL << 20)
void fi_emit_foreign_veneer(uint8_t slot[FI_FVEN_SLOT], uint64_t fn);

/*
 * A typed veneer: the slot of fi_emit_foreign_veneer with a real preamble
 * for type @hash (run-time) and arity @arity at V-16, in kCFI form or,
 * with @fineibt, in the set's FineIBT form (no BHI tail), and V holding an
 * ENDBR (or the set's poison where its preamble needs it) before the jmp
 * to F. Every check accepts it exactly as a function of that type; it is
 * given to stock kCFI modules for the libc functions whose address they
 * take (docs/compat.md, "Stock kCFI modules"). -EINVAL on a bad arity.
 */
int fi_emit_typed_veneer(uint8_t slot[FI_FVEN_SLOT], uint64_t fn,
			 uint32_t hash, int arity, bool fineibt, int set);
/* @slot holds a typed veneer: its F and type hash (as the check compares it). */
bool fi_match_typed_veneer(const uint8_t slot[FI_FVEN_SLOT], uint64_t *fn,
			   uint32_t *hash);

/*
 * A call site that has met a foreign veneer gets its first five bytes
 * replaced by "e9 rel32" (jmp to a per-site stub; byte 5 is left as it
 * was and never executed); every other byte of the site, and so every
 * instruction boundary another thread may stand on, is unchanged. The
 * stub (at most FI_FSTUB_SIZE bytes) starts with the site's own first
 * instruction (movl $-hash / $hash, %r10d), so a decoder finds the hash
 * there, then: the site's check, passing on to the call; else, if r11 is
 * a veneer entry (r11 - @ven_entry0 < @ven_size and a multiple of the
 * slot size), on to the call (paranoid: after the lea); else back to
 * the site's own check at site+6 with r10 reloaded, which traps as before.
 *
 * kcfi (after the site's movl $-H, %r10d):
 *   6:  45 03 53 f1          addl -15(%r11), %r10d
 *   10: 74 1c                je 40
 *   12: 49 ba imm64          movabs $-ven_entry0, %r10
 *   22: 4d 01 da             add %r11, %r10
 *   25: 41 f6 c2 3f          test $63, %r10b
 *   29: 75 0e                jne 45
 *   31: 49 81 fa imm32       cmp $ven_size, %r10
 *   38: 73 05                jae 45
 *   40: e9 rel32             jmp site+14           (the call)
 *   45: 41 ba imm32          movl $-H, %r10d
 *   51: e9 rel32             jmp site+6
 * paranoid (after movl $H, %r10d): cmpl -9(%r11), %r10d; je 49; the same
 * range check (jne/jae 49); 40: lea -16(%r11), %r11; 44: jmp site+16;
 * 49: movl $H, %r10d; 55: jmp site+6.
 *
 * Returns the stub's length, or 0 if @site's first bytes are not a kCFI
 * or paranoid caller's movl or a rel32 is out of reach.
 */
#define FI_FSTUB_SIZE	64
size_t fi_emit_foreign_stub(uint8_t out[FI_FSTUB_SIZE], const uint8_t *site,
			    uint64_t site_ip, uint64_t stub_ip, bool paranoid,
			    uint64_t ven_entry0, uint32_t ven_size);
/* "e9 rel32" from @site_ip to @stub_ip into @out (5 bytes); false if out of reach. */
bool fi_emit_site_jmp(uint8_t out[5], uint64_t site_ip, uint64_t stub_ip);
/* @p is "e9 rel32" at @ip: its target. */
bool fi_decode_site_jmp(const uint8_t *p, uint64_t ip, uint64_t *target);

/* ------------------------------------------- PLT entries (src/interpose/plt.c) */

/*
 * The x86-64 lazy PLTs of lld and GNU ld (16-byte entries), and the direct
 * form the runtime gives an entry once its GOT slot is bound, so that the
 * jump no longer reads the writable slot (docs/protection.md):
 *
 *   PLT0:        ff 35 d32      push GOT+8(%rip)
 *                [f2] ff 25 d32 jmp *GOT+16(%rip)
 *   lazy (.plt): ff 25 d32      jmp *slot(%rip)
 *                68 k32         push $k          (k: its .rela.plt index)
 *                e9 r32         jmp PLT0
 *   IBT (.plt):  f3 0f 1e fa    endbr64
 *                68 k32         push $k
 *                [f2] e9 r32    jmp PLT0         (then nop padding)
 *   IBT (.plt.sec):
 *                f3 0f 1e fa    endbr64
 *                [f2] ff 25 d32 jmp *slot(%rip)  (then nop padding)
 *
 * Direct entry (replaces a lazy entry, all 16 bytes; the psABI lets PLT
 * code clobber %r11):
 *   0:  49 bb imm64          movabs $target, %r11
 *   10: 41 ff e3             jmp *%r11
 *   13: cc cc cc
 * Direct .plt.sec entry (the IBT case: no room for both an ENDBR and the
 * movabs, so it jumps to its own lazy entry, made direct):
 *   0:  f3 0f 1e fa          endbr64
 *   4:  e9 rel32             jmp lazy entry
 *   9:  cc x 7
 */
#define FI_PLT_ENTRY	16
/* PLT0 of the PLT whose GOT (DT_PLTGOT) is at run-time @got? */
bool fi_match_plt0(const uint8_t *p, uint64_t ip, uint64_t got);
/* A lazy entry at @ip: its slot, index and PLT0; @ibt: the .plt of an IBT
 * PLT (no slot: *@slot is 0). */
bool fi_match_plt_lazy(const uint8_t *p, uint64_t ip, bool ibt,
		       uint64_t *slot, uint32_t *k, uint64_t *plt0);
/* An IBT .plt.sec entry at @ip: its slot. */
bool fi_match_plt_sec(const uint8_t *p, uint64_t ip, uint64_t *slot);
void fi_emit_plt_direct(uint8_t out[FI_PLT_ENTRY], uint64_t target);
bool fi_match_plt_direct(const uint8_t *p, uint64_t *target);
bool fi_emit_plt_sec_direct(uint8_t out[FI_PLT_ENTRY], uint64_t ip,
			    uint64_t lazy);
bool fi_match_plt_sec_direct(const uint8_t *p, uint64_t ip, uint64_t *lazy);

#endif /* FI_INSN_H */
