/* SPDX-License-Identifier: MIT */
/*
 * The rewriting passes (src/pass/patch.c) and the .fineibt record (src/elf/note.c)
 * on synthetic images: a struct fi_image built by hand, one executable view
 * over a buffer filled with kCFI preambles, call sites and thunk calls by
 * the insn.c encoders, plus a non-executable view that holds the same
 * patterns and must never be written.
 *
 * For every mode and flag combination the expected image is built
 * independently (site by site, from the semantics in docs/sequences.md,
 * through the encoders) and compared with the patched one as a whole, so
 * a byte written outside a site, or a site written wrongly, fails.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "image.h"
#include "noteenc.h"
#include "patch.h"
#include "elfwrite.h"

#define T_BASE		0x401000ull	/* the executable view */
#define T_SIZE		0x1000
#define D_BASE		0x403000ull	/* a data view (not executable) */
#define D_SIZE		0x100
#define FUNCS_AT	0x000
#define CALLS_AT	0x800
#define TCALLS_AT	0xa00
#define STUBS_AT	0xe00
#define THUNK_R11	0xf00
#define THUNK_RAX	0xf20
#define THUNK_R8	0xf40
#define ODD_TARGET	0xf80
/* A fixed rehash key, so that every run sees the same hashes. */
static const struct fineibt_key KEY = { {
	0x5e, 0xed, 0x12, 0x34, 0x9a, 0xbc, 0xde, 0xf0,
	0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65, 0x43, 0x21,
} };

enum entry { E_ENDBR64, E_ENDBR32, E_NONE };

struct fspec {
	uint32_t hash;
	int arity;
	enum entry entry;
	bool trash;		/* discovered as kCFI, bytes no longer match */
	bool in_data;		/* preamble in the non-executable view */
};

static const struct fspec fspecs[] = {
	{ 0x11111111, 0, E_ENDBR64 },
	{ 0x22222222, 1, E_ENDBR64 },
	{ 0x33333333, 2, E_ENDBR64 },
	{ 0x44444444, 7, E_ENDBR64 },
	{ 0x55555555, 3, E_NONE },
	{ 0x66666666, 2, E_ENDBR32 },
	{ 0x77777777, 1, E_ENDBR64, .trash = true },
	{ 0xfa1e0ff3, 4, E_ENDBR64 },	/* the hash is an ENDBR itself */
	{ 0x88888888, 0, E_ENDBR64, .in_data = true },	/* last: sorted */
};
#define NF (sizeof(fspecs) / sizeof(fspecs[0]))

enum cform { C_KCFI, C_OFF, C_TRASH, C_WRONG_THUNK, C_DATA };

struct cspec {
	uint32_t hash;
	bool jmp;
	enum cform form;
};

static const struct cspec cspecs[] = {
	{ 0x11111111, false, C_KCFI },
	{ 0x33333333, true, C_KCFI },
	{ 0x22222222, false, C_OFF },
	{ 0x44444444, true, C_OFF },
	{ 0x12121212, false, C_TRASH },
	{ 0x55555555, false, C_WRONG_THUNK },
	{ 0x66666666, false, C_DATA },
};
#define NC (sizeof(cspecs) / sizeof(cspecs[0]))

enum tform { T_OK, T_UNKNOWN_REG, T_TRASH, T_IN_SITE };

struct tspec {
	uint64_t thunk;		/* offset in the text view */
	int reg;		/* as discovery reports it */
	bool jmp;
	enum tform form;
};

static const struct tspec tspecs[] = {
	{ THUNK_RAX, 0, false, T_OK },
	{ THUNK_R8, -1, true, T_OK },		/* register from im->thunks[] */
	{ ODD_TARGET, -1, false, T_UNKNOWN_REG },
	{ THUNK_RAX, 0, false, T_TRASH },
	{ THUNK_R11, 11, false, T_IN_SITE },	/* the call of kCFI site 0 */
};
#define NT (sizeof(tspecs) / sizeof(tspecs[0]))

struct synth {
	struct fi_image im;
	struct fi_view views[2];
	struct fi_func funcs[NF];
	struct fi_call calls[NC];
	struct fi_tcall tcalls[NT];
	struct fi_sym syms[NF + 2];
	uint8_t text[T_SIZE];
	uint8_t data[D_SIZE];
};

static uint64_t f_addr(size_t i)
{
	if (fspecs[i].in_data)
		return D_BASE + 0x10;
	return T_BASE + FUNCS_AT + 0x40 * i + FI_PREAMBLE_SIZE;
}

static uint64_t c_addr(size_t i)
{
	if (cspecs[i].form == C_DATA)
		return D_BASE + 0x40;
	return T_BASE + CALLS_AT + 0x20 * i;
}

static uint64_t t_addr(size_t i)
{
	if (tspecs[i].form == T_IN_SITE)
		return c_addr(0) + FI_KCFI_CALLER_CALL;
	return T_BASE + TCALLS_AT + 0x10 * i;
}

/* Where link-time @addr lives in the synthetic image's buffers. */
static uint8_t *at(struct synth *s, uint64_t addr)
{
	if (addr >= D_BASE)
		return s->data + (addr - D_BASE);
	return s->text + (addr - T_BASE);
}

static void emit_at(struct synth *s, uint64_t addr, size_t cap,
		    void (*fn)(struct fi_buf *, const void *), const void *arg)
{
	struct fi_buf b;

	fi_buf_init(&b, at(s, addr), cap, addr);
	fn(&b, arg);
}

static void put_preamble(struct fi_buf *b, const void *arg)
{
	const struct fspec *f = arg;

	fi_emit_kcfi_preamble(b, f->hash, f->arity);
	if (f->entry == E_ENDBR64)
		fi_emit_seq(b, &fi_seq_endbr64, 0);
	else if (f->entry == E_ENDBR32)
		fi_emit_seq(b, &fi_seq_endbr32, 0);
}

static void put_caller(struct fi_buf *b, const void *arg)
{
	const struct cspec *c = arg;
	uint64_t thunk = T_BASE + (c->form == C_WRONG_THUNK ? THUNK_RAX : THUNK_R11);
	size_t start = b->len;

	fi_emit_kcfi_caller(b, c->hash, c->jmp, thunk);
	if (c->form == C_OFF) {
		struct fi_buf o;

		fi_buf_init(&o, b->mem + start, fi_seq_caller_off.len, b->ip);
		fi_emit_seq(&o, &fi_seq_caller_off, 0);
	}
}

static void put_tcall(struct fi_buf *b, const void *arg)
{
	const struct tspec *t = arg;

	fi_emit_rel32(b, t->jmp ? &fi_seq_thunk_jmp : &fi_seq_thunk_call,
		      T_BASE + t->thunk);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct fi_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void build(struct synth *s)
{
	memset(s, 0, sizeof(*s));
	/* int3 filler; function bodies "ret" */
	memset(s->text, 0xcc, sizeof(s->text));
	memset(s->data, 0xcc, sizeof(s->data));
	for (size_t i = 0; i < NF; i++) {
		const struct fspec *f = &fspecs[i];
		uint64_t a = f_addr(i);

		emit_at(s, a - FI_PREAMBLE_SIZE, FI_PREAMBLE_SIZE + 4, put_preamble, f);
		if (f->entry == E_NONE)	/* push %rbp; mov %rsp,%rbp */
			memcpy(at(s, a), "\x55\x48\x89\xe5", 4);
		at(s, a)[4] = 0xc3;
		if (f->trash)
			memset(at(s, a - FI_PREAMBLE_SIZE), 0x90, FI_PREAMBLE_SIZE);
		s->funcs[i] = (struct fi_func){
			.addr = a, .hash = f->hash, .arity = (int8_t)f->arity,
			.form = FI_PRE_KCFI, .endbr = f->entry != E_NONE,
			.has_cfi_sym = true,
		};
		s->syms[i] = (struct fi_sym){ .addr = a, .size = 16, .name = "f" };
	}
	for (size_t i = 0; i < NC; i++) {
		const struct cspec *c = &cspecs[i];

		emit_at(s, c_addr(i), FI_CALLSITE_SIZE, put_caller, c);
		if (c->form == C_TRASH)
			memset(at(s, c_addr(i)), 0x90, FI_CALLSITE_SIZE);
		s->calls[i] = (struct fi_call){
			.addr = c_addr(i), .hash = c->hash, .jmp = c->jmp,
			.form = c->form == C_OFF ? FI_CALL_OFF : FI_CALL_KCFI,
		};
	}
	for (size_t i = 0; i < NT; i++) {
		const struct tspec *t = &tspecs[i];

		if (t->form != T_IN_SITE)
			emit_at(s, t_addr(i), 6, put_tcall, t);
		if (t->form == T_TRASH)
			memset(at(s, t_addr(i)), 0x90, 6);
		s->tcalls[i] = (struct fi_tcall){
			.addr = t_addr(i), .thunk = T_BASE + t->thunk,
			.reg = t->reg, .jmp = t->jmp,
		};
	}
	/* symbols, sorted: f (x NF, same name), calls, tcalls */
	s->syms[NF] = (struct fi_sym){ .addr = T_BASE + CALLS_AT, .size = 0x200,
				       .name = "calls" };
	s->syms[NF + 1] = (struct fi_sym){ .addr = T_BASE + TCALLS_AT, .size = 0x100,
					   .name = "tcalls" };

	s->views[0] = (struct fi_view){ .vaddr = T_BASE, .size = T_SIZE,
					.mem = s->text, .exec = true };
	s->views[1] = (struct fi_view){ .vaddr = D_BASE, .size = D_SIZE,
					.mem = s->data, .exec = false };
	s->im.path = "synth";
	s->im.views = s->views;
	s->im.nviews = 2;
	qsort(s->syms, NF + 2, sizeof(s->syms[0]), cmp_sym);
	s->im.funcs = s->funcs;
	s->im.nfuncs = NF;
	s->im.calls = s->calls;
	s->im.ncalls = NC;
	s->im.tcalls = s->tcalls;
	s->im.ntcalls = NT;
	s->im.syms = s->syms;
	s->im.nsyms = NF + 2;
	s->im.thunks[11] = T_BASE + THUNK_R11;
	s->im.thunks[0] = T_BASE + THUNK_RAX;
	s->im.thunks[8] = T_BASE + THUNK_R8;
	s->im.bhi_args = T_BASE + STUBS_AT;
}

/* ------------------------------------------------------- the expectation */

struct model {
	const struct fi_patch_opts *o;
	struct synth *s;		/* the expected image, written here */
	struct fi_patch_stats st;
};

static bool differs(const uint8_t *a, const uint8_t *b, size_t n)
{
	return memcmp(a, b, n) != 0;
}

static void model_preamble(struct model *m, size_t i)
{
	const struct fspec *f = &fspecs[i];
	const struct fi_patch_opts *o = m->o;
	uint64_t a = f_addr(i), pre = a - FI_PREAMBLE_SIZE;
	uint8_t *p = at(m->s, pre), old[20];
	uint32_t h = (o->cfg.flags & FINEIBT_F_RAND) ? fineibt_rehash(f->hash, &o->key)
						    : f->hash;
	bool bhi = o->cfg.flags & FINEIBT_F_BHI, warn = o->cfg.flags & FINEIBT_F_WARN;
	struct fi_buf b;

	if (f->trash || f->in_data) {
		m->st.skipped++;
		return;
	}
	memcpy(old, p, sizeof(old));
	fi_buf_init(&b, p, 16, pre);
	if (o->cfg.mode != FINEIBT_MODE_FINEIBT || f->entry == E_NONE) {
		fi_emit_kcfi_preamble(&b, h, f->arity);
	} else {
		bool inl = bhi && f->arity == 1 && !warn;

		fi_emit_fineibt_preamble(&b, h);
		if (bhi && f->arity >= 1) {
			fi_buf_init(&b, p + 11, 9, pre + 11);
			fi_emit_bhi_tail(&b, f->arity, warn, o->bhi_args);
			if (inl)
				m->st.bhi_inline++;
			else
				m->st.bhi++;
		}
		if (f->entry == E_ENDBR64 && !inl) {
			fi_buf_init(&b, p + 16, 4, a);
			fi_emit_seq(&b, &fi_seq_endbr_poison, 0);
			m->st.poisoned++;
		}
	}
	if (differs(old, p, sizeof(old)))
		m->st.preambles++;
}

static void model_caller(struct model *m, size_t i)
{
	const struct cspec *c = &cspecs[i];
	const struct fi_patch_opts *o = m->o;
	uint8_t *p = at(m->s, c_addr(i)), old[20];
	uint32_t h = (o->cfg.flags & FINEIBT_F_RAND) ? fineibt_rehash(c->hash, &o->key)
						    : c->hash;
	struct fi_buf b;

	if (c->form == C_TRASH || c->form == C_WRONG_THUNK || c->form == C_DATA) {
		m->st.skipped++;
		return;
	}
	memcpy(old, p, sizeof(old));
	fi_buf_init(&b, p, 20, c_addr(i));
	if (o->cfg.mode == FINEIBT_MODE_FINEIBT) {
		if (o->cfg.flags & FINEIBT_F_PARANOID)
			fi_emit_paranoid_caller(&b, h, c->jmp);
		else if (o->dethunk)
			fi_emit_fineibt_caller(&b, h, c->jmp);
		else
			fi_emit_seq(&b, &fi_seq_fineibt_caller, h);
	} else {
		fi_emit_kcfi_caller(&b, h, c->jmp, T_BASE + THUNK_R11);
		if (o->cfg.mode == FINEIBT_MODE_OFF)
			memcpy(p, fi_seq_caller_off.bytes, fi_seq_caller_off.len);
		if (o->dethunk)
			memcpy(p + 14, fi_set_forms(FI_SET_V4)->kcfi_indirect[c->jmp]->bytes, 6);
	}
	if (differs(old, p, sizeof(old)))
		m->st.callers++;
	if (differs(old + 14, p + 14, 6))
		m->st.dethunked++;
}

/* Spelled out: call *%rax; nopl 0(%rax) / jmp *%r8; nopl (%rax). */
static const uint8_t call_rax6[] = { 0xff, 0xd0, 0x0f, 0x1f, 0x40, 0x00 };
static const uint8_t jmp_r86[] = { 0x41, 0xff, 0xe0, 0x0f, 0x1f, 0x00 };

static void model_tcall(struct model *m, size_t i)
{
	const struct tspec *t = &tspecs[i];
	uint8_t *p = at(m->s, t_addr(i));

	if (!m->o->dethunk || t->form == T_UNKNOWN_REG || t->form == T_IN_SITE)
		return;
	if (t->form == T_TRASH) {
		m->st.skipped++;
		return;
	}
	memcpy(p, t->jmp ? jmp_r86 : call_rax6, 6);
	m->st.dethunked++;
}

static void expect_image(struct synth *want, const struct fi_patch_opts *o,
			 struct fi_patch_stats *st)
{
	struct model m = { .o = o, .s = want };

	for (size_t i = 0; i < NF; i++)
		model_preamble(&m, i);
	for (size_t i = 0; i < NC; i++)
		model_caller(&m, i);
	for (size_t i = 0; i < NT; i++)
		model_tcall(&m, i);
	*st = m.st;
}

/* ------------------------------------------------------------- helpers */

static void dump_diff(const uint8_t *got, const uint8_t *want, size_t n,
		      uint64_t base)
{
	int shown = 0;

	for (size_t i = 0; i < n && shown < 8; i++) {
		if (got[i] != want[i]) {
			printf("  at %#llx: got %02x want %02x\n",
			       (unsigned long long)(base + i), got[i], want[i]);
			shown++;
		}
	}
}

static bool same_stats(const struct fi_patch_stats *a, const struct fi_patch_stats *b)
{
	bool ok = a->preambles == b->preambles && a->callers == b->callers &&
		  a->bhi == b->bhi && a->bhi_inline == b->bhi_inline &&
		  a->poisoned == b->poisoned && a->dethunked == b->dethunked &&
		  a->skipped == b->skipped;

	if (!ok)
		printf("  stats got pre %zu call %zu bhi %zu inl %zu poi %zu deth %zu skip %zu;"
		       " want %zu %zu %zu %zu %zu %zu %zu\n",
		       a->preambles, a->callers, a->bhi, a->bhi_inline, a->poisoned,
		       a->dethunked, a->skipped, b->preambles, b->callers, b->bhi,
		       b->bhi_inline, b->poisoned, b->dethunked, b->skipped);
	return ok;
}

static struct fi_patch_opts mkopts(enum fineibt_mode mode, unsigned int flags,
				   bool dethunk)
{
	return (struct fi_patch_opts){
		.cfg = { .mode = mode, .flags = flags }, .key = KEY,
		.bhi_args = T_BASE + STUBS_AT, .dethunk = dethunk, .quiet = true,
	};
}

static void name_of(char *buf, size_t len, const struct fi_patch_opts *o)
{
	char cfg[64];

	fineibt_config_str(&o->cfg, cfg, sizeof(cfg));
	snprintf(buf, len, "%s%s", cfg, o->dethunk ? "" : ",nodethunk");
}

/* ----------------------------------------------------------------- tests */

static struct synth s_got, s_want, s_orig;

static void run_combo(const struct fi_patch_opts *o)
{
	struct fi_patch_stats st, want_st;
	char name[128], what[192];
	int ret;

	name_of(name, sizeof(name), o);
	build(&s_got);
	build(&s_want);
	build(&s_orig);
	ret = fi_patch_image(&s_got.im, o, &st);
	expect_image(&s_want, o, &want_st);

	snprintf(what, sizeof(what), "patch_%s_returns_0", name);
	EXPECT(what, ret == 0);
	snprintf(what, sizeof(what), "patch_%s_bytes", name);
	if (!EXPECT(what, !memcmp(s_got.text, s_want.text, T_SIZE)))
		dump_diff(s_got.text, s_want.text, T_SIZE, T_BASE);
	snprintf(what, sizeof(what), "patch_%s_data_untouched", name);
	EXPECT(what, !memcmp(s_got.data, s_orig.data, D_SIZE));
	snprintf(what, sizeof(what), "patch_%s_stats", name);
	EXPECT(what, same_stats(&st, &want_st));

	/* The same pass (or any other) cannot run over its own output. */
	memcpy(s_want.text, s_got.text, T_SIZE);
	if (o->cfg.mode == FINEIBT_MODE_FINEIBT) {
		ret = fi_patch_image(&s_got.im, o, &st);
		snprintf(what, sizeof(what), "patch_%s_second_run", name);
		EXPECT(what, ret == -EALREADY && !memcmp(s_got.text, s_want.text, T_SIZE));
	}
	/* kcfi/off output looks like compiler output: the note refuses it */
	s_got.im.note.present = true;
	ret = fi_patch_image(&s_got.im, o, &st);
	snprintf(what, sizeof(what), "patch_%s_refused_with_note", name);
	EXPECT(what, ret == -EALREADY && !memcmp(s_got.text, s_want.text, T_SIZE));
}

static void test_matrix(void)
{
	static const unsigned int fl[] = {
		0, FINEIBT_F_PARANOID, FINEIBT_F_BHI, FINEIBT_F_WARN,
		FINEIBT_F_PARANOID | FINEIBT_F_BHI,
		FINEIBT_F_BHI | FINEIBT_F_WARN,
		FINEIBT_F_PARANOID | FINEIBT_F_BHI | FINEIBT_F_WARN,
		FINEIBT_F_PARANOID | FINEIBT_F_WARN,
	};
	int before = fi_check_failed, n = 0;

	for (int rand = 0; rand < 2; rand++) {
		unsigned int r = rand ? FINEIBT_F_RAND : 0;

		for (int d = 0; d < 2; d++) {
			struct fi_patch_opts o;

			o = mkopts(FINEIBT_MODE_OFF, r, d);
			run_combo(&o);
			o = mkopts(FINEIBT_MODE_KCFI, r, d);
			run_combo(&o);
			o = mkopts(FINEIBT_MODE_KCFI, r | FINEIBT_F_WARN, d);
			run_combo(&o);
			n += 3;
			for (size_t k = 0; k < sizeof(fl) / sizeof(fl[0]); k++) {
				o = mkopts(FINEIBT_MODE_FINEIBT, r | fl[k], d);
				run_combo(&o);
				n++;
			}
		}
	}
	printf("  %d mode/flag combinations\n", n);
	CHECK("patch_matrix_every_mode_and_flag", fi_check_failed == before && n == 44);
}

/* A few sites checked against the DESIGN bytes directly, not the model. */
static void test_spot_bytes(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_FINEIBT,
					FINEIBT_F_PARANOID | FINEIBT_F_BHI, true);
	const uint8_t *p;
	uint64_t a;

	build(&s_got);
	CHECK("spot_patch_ok", fi_patch_image(&s_got.im, &o, NULL) == 0);
	/* f2: arity 2 -> endbr; subl $h,%r10d; call __bhi_args[2]; func+0 poison */
	a = f_addr(2);
	p = at(&s_got, a - 16);
	CHECK("spot_fineibt_endbr", !memcmp(p, "\xf3\x0f\x1e\xfa\x41\x81\xea", 7));
	CHECK("spot_fineibt_hash", fi_load32(p + 7) == 0x33333333);
	CHECK("spot_bhi_call_opcode", p[11] == 0xe8);
	CHECK("spot_bhi_call_target",
	      (uint64_t)(int64_t)(int32_t)fi_load32(p + 12) + a ==
	      T_BASE + STUBS_AT + 2 * 32);
	CHECK("spot_poison", !memcmp(p + 16, "\x66\x0f\x1f\x00", 4));
	/* f1: arity 1, no warn -> inline cmovne; func+0 = f5 0f 1f 00 */
	p = at(&s_got, f_addr(1) - 16);
	CHECK("spot_arity1_inline",
	      !memcmp(p + 11, "\x49\x0f\x45\xfa\x75\xf5\x0f\x1f\x00", 9));
	/* f5: endbr32 is not exact: not poisoned */
	p = at(&s_got, f_addr(5));
	CHECK("spot_endbr32_not_poisoned", !memcmp(p, "\xf3\x0f\x1e\xfb", 4));
	/* f4: no ENDBR: kCFI form kept */
	p = at(&s_got, f_addr(4) - 16);
	CHECK("spot_no_endbr_kept", p[0] == 0xbb && fi_load32(p + 1) == 0x55555555);
	/* caller 1 (tail call): paranoid jmp form */
	p = at(&s_got, c_addr(1));
	CHECK("spot_paranoid_jmp",
	      !memcmp(p, "\x41\xba\x33\x33\x33\x33\x45\x3b\x53\xf7\x4d\x8d\x5b\xf0"
			 "\x75\xfd\x41\xff\xe3\x90", 20));
	/* tcall 0: call *%rax padded */
	CHECK("spot_dethunk_rax", !memcmp(at(&s_got, t_addr(0)), call_rax6, 6));
	CHECK("spot_dethunk_r8_jmp", !memcmp(at(&s_got, t_addr(1)), jmp_r86, 6));
	CHECK("spot_unknown_thunk_kept",
	      at(&s_got, t_addr(2))[0] == 0x2e && at(&s_got, t_addr(2))[1] == 0xe8);

	/* kcfi mode restores 41 ba over a disabled caller and keeps -hash */
	o = mkopts(FINEIBT_MODE_KCFI, 0, false);
	build(&s_got);
	CHECK("spot_kcfi_ok", fi_patch_image(&s_got.im, &o, NULL) == 0);
	p = at(&s_got, c_addr(2));
	CHECK("spot_kcfi_restores_movl", p[0] == 0x41 && p[1] == 0xba &&
	      fi_load32(p + 2) == (uint32_t)-0x22222222);
	/*
	 * kcfi and off de-thunk into one CS-padded instruction: the call
	 * returns to site+20, where the compiler's call returned, and no
	 * padding nop runs after it (v4 once wrote call *%r11; nop3).
	 */
	for (int off = 0; off < 2; off++) {
		o = mkopts(off ? FINEIBT_MODE_OFF : FINEIBT_MODE_KCFI, 0, true);
		build(&s_got);
		CHECK(off ? "spot_off_dethunk_ok" : "spot_kcfi_dethunk_ok",
		      fi_patch_image(&s_got.im, &o, NULL) == 0);
		CHECK(off ? "spot_off_dethunk_cs_call" : "spot_kcfi_dethunk_cs_call",
		      !memcmp(at(&s_got, c_addr(0)) + 14, "\x2e\x2e\x2e\x41\xff\xd3", 6));
		CHECK(off ? "spot_off_dethunk_cs_jmp" : "spot_kcfi_dethunk_cs_jmp",
		      !memcmp(at(&s_got, c_addr(1)) + 14, "\x2e\x2e\x2e\x41\xff\xe3", 6));
		/* read back as a v4 site: the CS padding alone is no v6.18 mark */
		for (int i = 0; i < 2; i++) {
			struct fi_caller_info ci;

			CHECK(off ? "spot_off_dethunk_reads_v4" : "spot_kcfi_dethunk_reads_v4",
			      fi_match_kcfi_caller(at(&s_got, c_addr(i)), c_addr(i), &ci) ==
			      (off ? FI_CALL_OFF : FI_CALL_KCFI) &&
			      ci.set == FI_SET_V4 && ci.jmp == (i == 1) && ci.thunk == 0);
		}
	}
	/* off mode: eb 0c over a live caller, hash kept */
	o = mkopts(FINEIBT_MODE_OFF, 0, false);
	build(&s_got);
	CHECK("spot_off_ok", fi_patch_image(&s_got.im, &o, NULL) == 0);
	p = at(&s_got, c_addr(0));
	CHECK("spot_off_jmp8", p[0] == 0xeb && p[1] == 0x0c &&
	      fi_load32(p + 2) == (uint32_t)-0x11111111);
}

static void test_bhi_stubs_needed(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI, true);
	int ret;

	build(&s_got);
	build(&s_orig);
	o.bhi_args = 0;
	o.quiet = false;
	ret = fi_patch_image(&s_got.im, &o, NULL);
	CHECK("bhi_without_stubs_einval", ret == -EINVAL);
	CHECK("bhi_without_stubs_untouched", !memcmp(s_got.text, s_orig.text, T_SIZE));

	/* Only arity 0 and 1 (no warn): the inline form needs no stubs. */
	build(&s_got);
	s_got.im.nfuncs = 2;
	ret = fi_patch_image(&s_got.im, &o, NULL);
	CHECK("bhi_arity01_needs_no_stubs", ret == 0);
	build(&s_got);
	s_got.im.nfuncs = 2;
	o.cfg.flags |= FINEIBT_F_WARN;
	CHECK("bhi_arity1_warn_needs_stubs", fi_patch_image(&s_got.im, &o, NULL) == -EINVAL);
	/* Only arity 0: bhi is fine and changes nothing of the BHI kind. */
	build(&s_got);
	s_got.im.nfuncs = 1;
	{
		struct fi_patch_stats st;

		CHECK("bhi_arity0_only_ok", fi_patch_image(&s_got.im, &o, &st) == 0 &&
		      st.bhi == 0 && st.bhi_inline == 0 && st.preambles == 1);
	}
}

/* The call at preamble+11 ends at func+0: rel32 = target - func. */
static void test_bhi_reach(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI, true);
	uint64_t f3 = f_addr(3);		/* arity 7 */
	uint64_t far = f3 + (uint64_t)INT32_MAX - 7 * 32;
	const uint8_t *p;
	int ret;

	build(&s_got);
	o.bhi_args = far;
	ret = fi_patch_image(&s_got.im, &o, NULL);
	p = at(&s_got, f3 - 16);
	CHECK("bhi_reach_int32_max_ok", ret == 0 && p[11] == 0xe8 &&
	      fi_load32(p + 12) == (uint32_t)INT32_MAX);
	build(&s_got);
	build(&s_orig);
	o.bhi_args = far + 1;
	ret = fi_patch_image(&s_got.im, &o, NULL);
	CHECK("bhi_reach_past_int32_max_einval", ret == -EINVAL &&
	      !memcmp(s_got.text, s_orig.text, T_SIZE));
	/* backwards: f1 alone (with warn, arity 1 calls its stub) */
	build(&s_got);
	s_got.im.funcs = &s_got.funcs[1];
	s_got.im.nfuncs = 1;
	o.cfg.flags |= FINEIBT_F_WARN;
	o.bhi_args = f_addr(1) - 32 + (uint64_t)(int64_t)INT32_MIN;
	ret = fi_patch_image(&s_got.im, &o, NULL);
	p = at(&s_got, f_addr(1) - 16);
	CHECK("bhi_reach_int32_min_ok", ret == 0 &&
	      fi_load32(p + 12) == (uint32_t)INT32_MIN);
	build(&s_got);
	s_got.im.funcs = &s_got.funcs[1];
	s_got.im.nfuncs = 1;
	o.bhi_args -= 1;
	CHECK("bhi_reach_past_int32_min_einval",
	      fi_patch_image(&s_got.im, &o, NULL) == -EINVAL);
}

/* A live module: text at link-time + bias, stubs given as run-time. */
static void test_live_bias(void)
{
	const uint64_t bias = 0x7f0000000000ull;
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_FINEIBT,
					FINEIBT_F_BHI | FINEIBT_F_RAND, true);

	build(&s_want);
	CHECK("live_file_ok", fi_patch_image(&s_want.im, &o, NULL) == 0);
	build(&s_got);
	s_got.im.live = true;
	s_got.im.bias = bias;
	o.bhi_args += bias;
	CHECK("live_ok", fi_patch_image(&s_got.im, &o, NULL) == 0);
	CHECK("live_same_bytes_as_file", !memcmp(s_got.text, s_want.text, T_SIZE));
}

static void test_bad_opts(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_AUTO, 0, true);

	build(&s_got);
	build(&s_orig);
	CHECK("opts_auto_einval", fi_patch_image(&s_got.im, &o, NULL) == -EINVAL);
	o = mkopts(FINEIBT_MODE_KCFI, FINEIBT_F_PARANOID, true);
	CHECK("opts_paranoid_without_fineibt_einval",
	      fi_patch_image(&s_got.im, &o, NULL) == -EINVAL);
	o = mkopts(FINEIBT_MODE_OFF, FINEIBT_F_BHI, true);
	CHECK("opts_bhi_without_fineibt_einval",
	      fi_patch_image(&s_got.im, &o, NULL) == -EINVAL);
	CHECK("opts_bad_untouched", !memcmp(s_got.text, s_orig.text, T_SIZE));
}

/* An image with a single site already in FineIBT form is refused whole. */
static void test_mixed_refused(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_KCFI, FINEIBT_F_RAND, true);
	struct fi_buf b;

	build(&s_got);
	fi_buf_init(&b, at(&s_got, c_addr(3)), 20, c_addr(3));
	fi_emit_paranoid_caller(&b, 0x44444444, true);
	memcpy(&s_orig, &s_got, sizeof(s_got));
	CHECK("one_paranoid_caller_ealready",
	      fi_patch_image(&s_got.im, &o, NULL) == -EALREADY);
	CHECK("one_paranoid_caller_untouched", !memcmp(s_got.text, s_orig.text, T_SIZE));

	build(&s_got);
	fi_buf_init(&b, at(&s_got, f_addr(0) - 16), 16, f_addr(0) - 16);
	fi_emit_fineibt_preamble(&b, 0x11111111);
	CHECK("one_fineibt_preamble_ealready",
	      fi_patch_image(&s_got.im, &o, NULL) == -EALREADY);
}

static char msgs[4096];
static size_t msgs_len;

static int capture(enum fineibt_print_level level, const char *fmt, va_list ap)
{
	int n = vsnprintf(msgs + msgs_len, sizeof(msgs) - msgs_len, fmt, ap);

	if (n > 0)
		msgs_len += (size_t)n < sizeof(msgs) - msgs_len ? (size_t)n
							 : sizeof(msgs) - msgs_len - 1;
	return n;
}

static void test_messages(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_FINEIBT, 0, true);
	fineibt_print_fn old;
	int ret;

	build(&s_got);
	o.quiet = false;
	msgs_len = 0;
	msgs[0] = 0;
	old = fineibt_set_print(capture);
	ret = fi_patch_image(&s_got.im, &o, NULL);
	fineibt_set_print(old);
	printf("%s", msgs);
	CHECK("messages_patch_ok", ret == 0);
	CHECK("message_call_site",
	      strstr(msgs, "fineibt: warning: synth: calls+0x80: call site does not "
			   "match the kCFI pattern; left unpatched\n") != NULL);
	CHECK("message_wrong_thunk",
	      strstr(msgs, "synth: calls+0xa0: call site does not match") != NULL);
	CHECK("message_preamble",
	      strstr(msgs, "synth: f+0x0: preamble does not match the kCFI pattern; "
			   "left unpatched\n") != NULL);
	CHECK("message_thunk_call",
	      strstr(msgs, "synth: tcalls+0x30: thunk call does not match") != NULL);

	build(&s_got);
	o.quiet = true;
	msgs_len = 0;
	msgs[0] = 0;
	old = fineibt_set_print(capture);
	fi_patch_image(&s_got.im, &o, NULL);
	fineibt_set_print(old);
	CHECK("messages_quiet", msgs_len == 0);
}

static void test_hash(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_KCFI, 0, true);

	CHECK("hash_norand_unchanged", fi_patch_hash(&o, 0x12345678) == 0x12345678);
	o.cfg.flags = FINEIBT_F_RAND;
	CHECK("hash_rand_rehash",
	      fi_patch_hash(&o, 0x12345678) == fineibt_rehash(0x12345678, &KEY) &&
	      fi_patch_hash(&o, 0x12345678) != 0x12345678);
}

static void test_indirect_encoder(void)
{
	uint8_t buf[8];
	struct fi_buf b;

	fi_buf_init(&b, buf, sizeof(buf), 0);
	fi_emit_indirect(&b, 11, false, 6);
	CHECK("indirect_r11_is_template", !b.err && b.len == 6 &&
	      !memcmp(buf, fi_seq_indirect_call.bytes, 6));
	fi_buf_init(&b, buf, sizeof(buf), 0);
	fi_emit_indirect(&b, 11, true, 6);
	CHECK("indirect_r11_jmp_is_template", !b.err && b.len == 6 &&
	      !memcmp(buf, fi_seq_indirect_jmp.bytes, 6));
	fi_buf_init(&b, buf, sizeof(buf), 0);
	fi_emit_indirect(&b, 7, false, 0);
	CHECK("indirect_rdi_unpadded", !b.err && b.len == 2 &&
	      buf[0] == 0xff && buf[1] == 0xd7);
	fi_buf_init(&b, buf, sizeof(buf), 0);
	fi_emit_indirect(&b, 16, false, 6);
	CHECK("indirect_bad_reg_einval", b.err == -EINVAL);
	fi_buf_init(&b, buf, 4, 0);
	fi_emit_indirect(&b, 3, true, 6);
	CHECK("indirect_no_room_enospc", b.err == -ENOSPC);
}

static void test_note(void)
{
	struct fi_note n = { .present = true,
			     .cfg = { FINEIBT_MODE_FINEIBT,
				      FINEIBT_F_RAND | FINEIBT_F_PARANOID | FINEIBT_F_BHI },
			     .key = KEY, .bhi_args = 0x401e00 };
	struct fi_patch_stats st = { 1, 2, 3, 4, 5, 6, 7 }, st2;
	uint8_t buf[FI_NOTE_SIZE + 8];
	struct fi_note d;
	ssize_t len;

	len = fi_note_encode(&n, &st, buf, sizeof(buf));
	CHECK("note_encode_size", len == FI_NOTE_SIZE);
	CHECK("note_magic", !memcmp(buf, "FIBT", 4) && buf[4] == FI_NOTE_VERSION && buf[5] == 0);
	CHECK("note_decode_ok", fi_note_decode(buf, (size_t)len, &d) == 0);
	CHECK("note_roundtrip", d.present && d.cfg.mode == n.cfg.mode &&
	      d.cfg.flags == n.cfg.flags && !memcmp(&d.key, &n.key, sizeof(KEY)) &&
	      d.bhi_args == n.bhi_args);
	CHECK("note_counts", fi_note_decode_counts(buf, (size_t)len, &st2) == 0 &&
	      same_stats(&st, &st2));
	CHECK("note_encode_short_enospc", fi_note_encode(&n, &st, buf, 10) == -ENOSPC);
	for (size_t l = 0; l < FI_NOTE_SIZE; l++) {
		if (!EXPECT("note_truncated_einval", fi_note_decode(buf, l, &d) != 0))
			break;
	}
	CHECK("note_truncated_rejected", true);
	buf[0] = 'X';
	CHECK("note_bad_magic", fi_note_decode(buf, (size_t)len, &d) == -EINVAL &&
	      !d.present);
	buf[0] = 'F';
	CHECK("note_version_current", buf[4] == FI_NOTE_VERSION && buf[5] == 0);
	buf[4] = FI_NOTE_VERSION + 1;
	CHECK("note_new_version_present",
	      fi_note_decode(buf, (size_t)len, &d) == -EPROTONOSUPPORT && d.present &&
	      d.version == FI_NOTE_VERSION + 1);
	/* Versions 1 (xor rehash) and 2 (32-bit seed) are not read either:
	 * their hashes follow another rule. */
	buf[4] = 1;
	CHECK("note_v1_not_read",
	      fi_note_decode(buf, (size_t)len, &d) == -EPROTONOSUPPORT && d.present &&
	      d.version == 1);
	buf[4] = 2;
	CHECK("note_v2_not_read",
	      fi_note_decode(buf, (size_t)len, &d) == -EPROTONOSUPPORT && d.present &&
	      d.version == 2);
	CHECK("note_key_at_64", !memcmp(buf + 64, KEY.bytes, 16) &&
	      !memcmp(buf + 16, "\0\0\0\0", 4));
	buf[4] = FI_NOTE_VERSION;
	buf[8] = FINEIBT_MODE_AUTO;
	CHECK("note_auto_rejected", fi_note_decode(buf, (size_t)len, &d) == -EINVAL);
	buf[8] = FINEIBT_MODE_KCFI;
	CHECK("note_paranoid_without_fineibt_rejected",
	      fi_note_decode(buf, (size_t)len, &d) == -EINVAL);
	buf[8] = FINEIBT_MODE_FINEIBT;
	buf[15] = 0x80;
	CHECK("note_unknown_flag_rejected", fi_note_decode(buf, (size_t)len, &d) == -EINVAL);
	n.cfg.mode = FINEIBT_MODE_AUTO;
	CHECK("note_encode_auto_einval", fi_note_encode(&n, NULL, buf, sizeof(buf)) == -EINVAL);
}

/*
 * fi_image_write_file on hand-made ELF headers: a file it cannot extend
 * is refused with a reason and nothing appears at the destination; a
 * minimal one gets the section, and its note decodes.
 */
static void test_write_file(void)
{
	struct fi_patch_opts o = mkopts(FINEIBT_MODE_FINEIBT, FINEIBT_F_RAND, true);
	static const char shstr[] = "\0.shstrtab";
	static uint8_t file[sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Shdr) + sizeof(shstr)]
		__attribute__((aligned(8)));
	Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
	Elf64_Shdr *sh = (Elf64_Shdr *)(file + sizeof(*eh));
	char dir[] = "/tmp/fi_test_patch.XXXXXX", out[128], err[256];
	struct fi_image im = { .path = "mini", .file = file, .file_size = sizeof(file) };
	static uint8_t buf[4096] __attribute__((aligned(8)));
	struct fi_note n;
	FILE *f;
	size_t len;
	int ret;

	if (!CHECK("write_tmpdir", mkdtemp(dir) != NULL))
		return;
	snprintf(out, sizeof(out), "%s/out", dir);
	memset(file, 0, sizeof(file));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shoff = sizeof(*eh);
	eh->e_shnum = 2;
	eh->e_shstrndx = 1;
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB,
			      .sh_offset = sizeof(*eh) + 2 * sizeof(Elf64_Shdr),
			      .sh_size = sizeof(shstr), .sh_addralign = 1 };
	memcpy(file + sh[1].sh_offset, shstr, sizeof(shstr));

	eh->e_shnum = 0;
	ret = fi_image_write_file(&im, &o, NULL, out, 0644, err, sizeof(err));
	printf("  %s\n", err);
	CHECK("write_shnum0_refused", ret == -ENOTSUP && strstr(err, "e_shnum 0") &&
	      access(out, F_OK) != 0);
	eh->e_shnum = 2;
	eh->e_shstrndx = SHN_XINDEX;
	ret = fi_image_write_file(&im, &o, NULL, out, 0644, err, sizeof(err));
	CHECK("write_xindex_refused", ret == -ENOTSUP && access(out, F_OK) != 0);
	eh->e_shstrndx = 1;
	eh->e_shoff = sizeof(file) + 8;
	ret = fi_image_write_file(&im, &o, NULL, out, 0644, err, sizeof(err));
	CHECK("write_bad_shoff_refused", ret == -EINVAL && access(out, F_OK) != 0);
	eh->e_shoff = sizeof(*eh);
	snprintf((char *)buf, sizeof(buf), "%s/nodir/out", dir);
	ret = fi_image_write_file(&im, &o, NULL, (char *)buf, 0644, err, sizeof(err));
	printf("  %s\n", err);
	CHECK("write_missing_dir_fails", ret < 0);

	ret = fi_image_write_file(&im, &o, NULL, out, 0640, err, sizeof(err));
	CHECK("write_minimal_ok", ret == 0);
	f = fopen(out, "rb");
	len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	{
		const Elf64_Ehdr *oh = (const Elf64_Ehdr *)buf;
		const Elf64_Shdr *os = (const Elf64_Shdr *)(buf + oh->e_shoff);
		const Elf64_Shdr *str = &os[oh->e_shstrndx], *fs = &os[2];
		struct stat stt;

		CHECK("write_minimal_layout", len > sizeof(file) && oh->e_shnum == 3 &&
		      oh->e_shoff % 8 == 0 && oh->e_shoff + 3 * sizeof(*os) == len &&
		      !memcmp(buf + sizeof(*oh), file + sizeof(*eh),
			      sizeof(file) - sizeof(*eh)));
		CHECK("write_minimal_names",
		      !strcmp((const char *)buf + str->sh_offset + fs->sh_name, ".fineibt") &&
		      !strcmp((const char *)buf + str->sh_offset + os[1].sh_name, ".shstrtab"));
		CHECK("write_minimal_note",
		      fs->sh_type == SHT_PROGBITS && !(fs->sh_flags & SHF_ALLOC) &&
		      fi_note_decode(buf + fs->sh_offset, fs->sh_size, &n) == 0 &&
		      n.cfg.mode == FINEIBT_MODE_FINEIBT &&
		      !memcmp(&n.key, &KEY, sizeof(KEY)));
		CHECK("write_mode_bits", !stat(out, &stt) && (stt.st_mode & 0777) == 0640);
	}
	/* a file that already has .fineibt is refused (the output above) */
	im.file = buf;
	im.file_size = len;
	snprintf(out, sizeof(out), "%s/out2", dir);
	ret = fi_image_write_file(&im, &o, NULL, out, 0644, err, sizeof(err));
	CHECK("write_twice_refused", ret == -EALREADY && access(out, F_OK) != 0);
	snprintf(out, sizeof(out), "%s/out", dir);
	unlink(out);
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
		f = popen(cmd, "r");
		CHECK("write_no_temporary_left", f && fscanf(f, "%zu", &len) == 1 && len == 0);
		if (f)
			pclose(f);
	}
	rmdir(dir);
}

int main(void)
{
	test_matrix();
	test_spot_bytes();
	test_bhi_stubs_needed();
	test_bhi_reach();
	test_live_bias();
	test_bad_opts();
	test_mixed_refused();
	test_messages();
	test_hash();
	test_indirect_encoder();
	test_note();
	test_write_file();
	return fi_check_exit();
}
