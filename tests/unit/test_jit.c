/* SPDX-License-Identifier: MIT */
/*
 * The JIT emitter (src/jit/jit.c): what it emits must be, byte for byte, what
 * the patcher (src/pass/patch.c) makes of the compiler's sequences for the same
 * hash, arity and mode; what it emits must read back (hash, arity) and
 * classify as the intended form; errors (-ENOSPC, -ERANGE, -EINVAL) are
 * reported; and the public API follows the process state, driven here
 * through the runtime state's setters (fi_rt_set_config/fi_rt_set_active).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "fineibt.h"
#include "image.h"
#include "insn.h"
#include "jit.h"
#include "patch.h"
#include "runtime.h"

/* A fixed rehash key, so that every run sees the same hashes. */
static const struct fineibt_key KEY = { {
	0x5e, 0xed, 0x12, 0x34, 0x9a, 0xbc, 0xde, 0xf0,
	0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65, 0x43, 0x21,
} };
#define VADDR	0x500000ull	/* where the fake image's text "runs" */
#define STUBS	0x510000ull	/* a BHI stub array in reach of it */
#define THUNK	0x520000ull	/* __x86_indirect_thunk_r11 */
#define SITE	64		/* call site offset in the fake text */

struct mode {
	const char *name;
	enum fineibt_mode mode;
	unsigned int flags;
};

static const struct mode modes[] = {
	{ "kcfi", FINEIBT_MODE_KCFI, 0 },
	{ "kcfi,rand", FINEIBT_MODE_KCFI, FINEIBT_F_RAND },
	{ "kcfi,warn", FINEIBT_MODE_KCFI, FINEIBT_F_WARN | FINEIBT_F_RAND },
	{ "off", FINEIBT_MODE_OFF, 0 },
	{ "fineibt", FINEIBT_MODE_FINEIBT, 0 },
	{ "fineibt,rand", FINEIBT_MODE_FINEIBT, FINEIBT_F_RAND },
	{ "fineibt,warn", FINEIBT_MODE_FINEIBT, FINEIBT_F_WARN },
	{ "paranoid", FINEIBT_MODE_FINEIBT, FINEIBT_F_PARANOID | FINEIBT_F_RAND },
	{ "bhi", FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI },
	{ "bhi,warn", FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI | FINEIBT_F_WARN },
	{ "paranoid,bhi,rand", FINEIBT_MODE_FINEIBT,
	  FINEIBT_F_PARANOID | FINEIBT_F_BHI | FINEIBT_F_RAND },
	{ "paranoid,bhi,warn", FINEIBT_MODE_FINEIBT,
	  FINEIBT_F_PARANOID | FINEIBT_F_BHI | FINEIBT_F_WARN },
	/* The v6.18 sequence set (docs/sequences.md). */
	{ "kcfi,rand,seq=v6.18", FINEIBT_MODE_KCFI,
	  FINEIBT_F_RAND | FINEIBT_F_SEQ_V618 },
	{ "off,seq=v6.18", FINEIBT_MODE_OFF, FINEIBT_F_SEQ_V618 },
	{ "fineibt,seq=v6.18", FINEIBT_MODE_FINEIBT, FINEIBT_F_SEQ_V618 },
	{ "paranoid,seq=v6.18", FINEIBT_MODE_FINEIBT,
	  FINEIBT_F_PARANOID | FINEIBT_F_RAND | FINEIBT_F_SEQ_V618 },
	{ "bhi,seq=v6.18", FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI | FINEIBT_F_SEQ_V618 },
	{ "paranoid,bhi,warn,seq=v6.18", FINEIBT_MODE_FINEIBT,
	  FINEIBT_F_PARANOID | FINEIBT_F_BHI | FINEIBT_F_WARN | FINEIBT_F_SEQ_V618 },
};

#define NMODES	(sizeof(modes) / sizeof(modes[0]))

/*
 * Compile-time hashes: ordinary, and one whose rehash needs LFSR steps:
 * KEY's permutation takes 0xc92f0989 to endbr64 (fi_rehash_prp_inverse;
 * checked in the rehash_hash test below).
 */
static const uint32_t hashes[] = { 0x12345678u, 0x9abcdef0u, 0x01000000u,
				   0xc92f0989u };

static void env_for(const struct mode *m, struct fi_jit_env *env)
{
	*env = (struct fi_jit_env){
		.cfg = { .mode = m->mode, .flags = m->flags },
		.key = KEY,
		.nstubs = 1,
		.stubs = { STUBS },
	};
}

static bool is_fineibt(const struct mode *m)
{
	return m->mode == FINEIBT_MODE_FINEIBT;
}

static int set_of(const struct mode *m)
{
	return m->flags & FINEIBT_F_SEQ_V618 ? FI_SET_V618 : FI_SET_V4;
}

/* ------------------------------------------------- the patcher as oracle */

/*
 * Compiler output for one function (@h0, @arity) at VADDR+16 and one call
 * site at VADDR+SITE, patched by fi_patch_image() in @m; returns the
 * patched text in @text.
 */
static int patch_fake(const struct mode *m, uint32_t h0, int arity, bool tail,
		      uint8_t *text, size_t size)
{
	struct fi_view view = { .vaddr = VADDR, .size = size, .mem = text, .exec = true };
	struct fi_func fn = { .addr = VADDR + FI_PREAMBLE_SIZE, .hash = h0,
			      .arity = (int8_t)arity, .form = FI_PRE_KCFI,
			      .endbr = true };
	struct fi_call call = { .addr = VADDR + SITE, .hash = h0, .jmp = tail,
				.form = FI_CALL_KCFI };
	struct fi_image im = { .path = "fake", .views = &view, .nviews = 1,
			       .funcs = &fn, .nfuncs = 1, .calls = &call,
			       .ncalls = 1 };
	struct fi_patch_opts o = { .cfg = { m->mode, m->flags }, .key = KEY,
				   .bhi_args = STUBS, .dethunk = true,
				   .quiet = true };
	struct fi_buf b;

	im.thunks[FINEIBT_REG_R11] = THUNK;
	memset(text, 0xcc, size);
	fi_buf_init(&b, text, size, VADDR);
	fi_emit_kcfi_preamble(&b, h0, arity);
	fi_emit_seq(&b, &fi_seq_endbr64, 0);
	fi_buf_init(&b, text + SITE, FI_CALLSITE_SIZE, VADDR + SITE);
	fi_emit_kcfi_caller(&b, h0, tail, THUNK);
	if (b.err)
		return b.err;
	return fi_patch_image(&im, &o, NULL);
}

static void test_patcher_oracle(void)
{
	for (size_t i = 0; i < NMODES; i++) {
		const struct mode *m = &modes[i];
		struct fi_jit_env env;
		char name[96];
		bool ok = true;

		env_for(m, &env);
		for (size_t k = 0; k < sizeof(hashes) / sizeof(hashes[0]); k++)
		for (int arity = 0; arity <= FI_MAX_ARITY; arity++)
		for (int tail = 0; tail < 2; tail++) {
			uint8_t text[SITE + FI_CALLSITE_SIZE], got[32];
			uint32_t h = fi_jit_rehash(&env, hashes[k]);
			struct fi_buf b;

			ok &= EXPECT("jit: patcher accepts the fake image",
				     !patch_fake(m, hashes[k], arity, tail, text,
						 sizeof(text)));
			fi_buf_init(&b, got, sizeof(got), VADDR);
			ok &= EXPECT("jit: preamble emits",
				     !fi_jit_preamble(&env, &b, h, arity) &&
				     b.len == FI_JIT_PREAMBLE_LEN);
			ok &= EXPECT("jit: preamble == patched preamble",
				     !memcmp(got, text, FI_JIT_PREAMBLE_LEN));
			fi_buf_init(&b, got, sizeof(got), VADDR + SITE);
			ok &= EXPECT("jit: call emits",
				     !fi_jit_call(&env, &b, h, FINEIBT_REG_R11, tail) &&
				     b.len == FI_CALLSITE_SIZE);
			ok &= EXPECT("jit: call == patched call site",
				     !memcmp(got, text + SITE, FI_CALLSITE_SIZE));
		}
		snprintf(name, sizeof(name), "jit: bytes equal the patcher's (%s)",
			 m->name);
		CHECK(name, ok);
	}
}

/* ---------------------------------------------- forms and read-back */

/* The preamble form @m must produce for @arity. */
static enum fi_preamble_form want_form(const struct mode *m, int arity)
{
	if (!is_fineibt(m))
		return FI_PRE_KCFI;
	if (!(m->flags & FINEIBT_F_BHI) || arity == 0)
		return FI_PRE_FINEIBT;
	if (arity == 1 && !(m->flags & FINEIBT_F_WARN) && set_of(m) == FI_SET_V4)
		return FI_PRE_FINEIBT_ARITY1;
	return FI_PRE_FINEIBT_BHI;
}

static bool check_preamble(const struct mode *m, const struct fi_jit_env *env,
			   uint32_t h, int arity)
{
	const uint64_t ip = STUBS - 0x4000;
	struct fi_preamble_info info;
	uint8_t p[FI_JIT_PREAMBLE_LEN];
	enum fi_preamble_form form = want_form(m, arity);
	struct fi_buf b;
	uint32_t got;
	bool ok = true;
	int want_arity = form == FI_PRE_FINEIBT ? 0 : arity;

	fi_buf_init(&b, p, sizeof(p), ip);
	if (!EXPECT("jit: emit", !fi_jit_preamble(env, &b, h, arity)))
		return false;
	ok &= EXPECT("jit: form", fi_classify_preamble(p, ip, &info) == form);
	ok &= EXPECT("jit: classified hash", info.hash == h);
	if (form == FI_PRE_FINEIBT_BHI)
		ok &= EXPECT("jit: bhi call target",
			     info.bhi_target == STUBS + (uint64_t)arity * FI_BHI_SLOT_SIZE);
	/* func+0: ENDBR (kcfi/off), poison, or the arity-1 magic. */
	ok &= EXPECT("jit: func+0", fi_load32(p + FI_PREAMBLE_SIZE) ==
		     (!is_fineibt(m) ? FI_ENDBR64_VAL :
		      form == FI_PRE_FINEIBT_ARITY1 ? FI_BHI_MAGIC_VAL :
		      set_of(m) == FI_SET_V618 ? FI_V618_POISON_VAL : FI_POISON_VAL));
	if (is_fineibt(m))
		ok &= EXPECT("jit: preamble set", info.set == set_of(m));
	ok &= EXPECT("jit: read hash", !fi_jit_read_hash(p, ip, &got) && got == h);
	ok &= EXPECT("jit: read arity (no module record)",
		     fi_jit_read_arity(env, p, ip, -1) == want_arity);
	ok &= EXPECT("jit: read arity (module record)",
		     fi_jit_read_arity(env, p, ip, arity) == arity);
	return ok;
}

static bool check_call(const struct mode *m, const struct fi_jit_env *env,
		       uint32_t h, bool tail)
{
	const uint64_t ip = 0x7000;
	uint8_t p[FINEIBT_JIT_CALL_MAX], ref[FINEIBT_JIT_CALL_MAX];
	struct fi_caller_info ci;
	struct fi_buf b;
	bool ok = true;

	fi_buf_init(&b, ref, sizeof(ref), ip);
	if (!EXPECT("jit: call emit", !fi_jit_call(env, &b, h, FINEIBT_REG_R11, tail)))
		return false;
	if (!is_fineibt(m)) {
		/* The check (live, or jumped over under off) then call *%r11. */
		ok &= EXPECT("jit: kcfi caller hash", fi_decode_caller_hash(ref) == h);
		ok &= EXPECT("jit: off form",
			     !memcmp(ref, fi_seq_caller_off.bytes, fi_seq_caller_off.len) ==
			     (m->mode == FINEIBT_MODE_OFF));
		ok &= EXPECT("jit: direct call",
			     !memcmp(ref + FI_KCFI_CALLER_CALL,
				     fi_set_forms(set_of(m))->kcfi_indirect[tail]->bytes,
				     FI_CALLSITE_SIZE - FI_KCFI_CALLER_CALL));
		/* The classifier reads it as a de-thunked compiler site. */
		ok &= EXPECT("jit: kcfi caller classified",
			     fi_classify_caller(ref, ip, &ci) ==
			     (m->mode == FINEIBT_MODE_OFF ? FI_CALL_OFF : FI_CALL_KCFI) &&
			     ci.hash == h && ci.jmp == tail && ci.thunk == 0);
	} else {
		enum fi_caller_form want = m->flags & FINEIBT_F_PARANOID ?
					   FI_CALL_PARANOID : FI_CALL_FINEIBT;

		ok &= EXPECT("jit: caller form", fi_classify_caller(ref, ip, &ci) == want);
		ok &= EXPECT("jit: caller hash", ci.hash == h);
		ok &= EXPECT("jit: caller tail", ci.jmp == tail);
		ok &= EXPECT("jit: caller set", ci.set == set_of(m));
	}
	/* Any other register: one mov into r11, then the same 20 bytes. */
	for (int reg = 0; reg < 16; reg++) {
		size_t mov = reg == FINEIBT_REG_R11 ? 0 : fi_seq_mov_r11.len;

		fi_buf_init(&b, p, sizeof(p), ip - mov);
		ok &= EXPECT("jit: call via reg", !fi_jit_call(env, &b, h, reg, tail));
		ok &= EXPECT("jit: call via reg length", b.len == FI_CALLSITE_SIZE + mov);
		ok &= EXPECT("jit: call via reg bytes",
			     !memcmp(p + mov, ref, FI_CALLSITE_SIZE));
	}
	return ok;
}

static void test_forms(void)
{
	for (size_t i = 0; i < NMODES; i++) {
		const struct mode *m = &modes[i];
		struct fi_jit_env env;
		char name[96];
		bool ok = true;

		env_for(m, &env);
		for (size_t k = 0; k < sizeof(hashes) / sizeof(hashes[0]); k++) {
			uint32_t h = fi_jit_rehash(&env, hashes[k]);

			for (int arity = 0; arity <= FI_MAX_ARITY; arity++)
				ok &= check_preamble(m, &env, h, arity);
			ok &= check_call(m, &env, h, false);
			ok &= check_call(m, &env, h, true);
		}
		snprintf(name, sizeof(name), "jit: forms and read-back (%s)", m->name);
		CHECK(name, ok);
	}
}

/* The mov encodings, decoded by hand: REX.W(+R) 89 /r with rm = r11. */
static void test_mov_r11(void)
{
	bool ok = true;

	for (int reg = 0; reg < 16; reg++) {
		uint8_t p[4];
		struct fi_buf b;

		if (reg == FINEIBT_REG_R11)
			continue;
		fi_buf_init(&b, p, sizeof(p), 0);
		fi_emit_mov_r11(&b, reg);
		ok &= EXPECT("jit: mov len", !b.err && b.len == 3);
		ok &= EXPECT("jit: mov rex", p[0] == (fi_seq_mov_r11.bytes[0] | (reg >= 8 ? 4 : 0)));
		ok &= EXPECT("jit: mov opcode", p[1] == fi_seq_mov_r11.bytes[1]);
		ok &= EXPECT("jit: mov modrm reg", ((p[2] >> 3) & 7) == (reg & 7));
		ok &= EXPECT("jit: mov modrm rm", (p[2] & 0xc7) == fi_seq_mov_r11.bytes[2]);
	}
	CHECK("jit: mov %reg, %r11 for every register", ok);
}

/* ----------------------------------------------------------- errors */

static void test_errors(void)
{
	const struct mode bhi = { "bhi", FINEIBT_MODE_FINEIBT, FINEIBT_F_BHI };
	const struct mode bhiw = { "bhi,warn", FINEIBT_MODE_FINEIBT,
				   FINEIBT_F_BHI | FINEIBT_F_WARN };
	const uint64_t far = STUBS + (1ull << 32);
	struct fi_jit_env env, envw;
	uint8_t p[64];
	struct fi_buf b;
	bool ok = true;

	env_for(&bhi, &env);
	env_for(&bhiw, &envw);
	for (size_t i = 0; i < NMODES; i++) {
		struct fi_jit_env e;

		env_for(&modes[i], &e);
		for (size_t cap = 0; cap < FI_JIT_PREAMBLE_LEN; cap++) {
			fi_buf_init(&b, p, cap, STUBS);
			ok &= EXPECT("jit: preamble -ENOSPC",
				     fi_jit_preamble(&e, &b, 1, 3) == -ENOSPC);
		}
		for (size_t cap = 0; cap < FI_CALLSITE_SIZE; cap++) {
			fi_buf_init(&b, p, cap, STUBS);
			ok &= EXPECT("jit: call -ENOSPC",
				     fi_jit_call(&e, &b, 1, FINEIBT_REG_R11, false) == -ENOSPC);
		}
	}
	CHECK("jit: buffers too small give -ENOSPC", ok);

	ok = true;
	for (int arity = 0; arity <= FI_MAX_ARITY; arity++) {
		/* Only preambles that call a stub need one in reach. */
		bool calls = arity >= 2;

		fi_buf_init(&b, p, sizeof(p), far);
		ok &= EXPECT("jit: bhi far", fi_jit_preamble(&env, &b, 1, arity) ==
			     (calls ? -ERANGE : 0));
		fi_buf_init(&b, p, sizeof(p), far);
		ok &= EXPECT("jit: bhi,warn far", fi_jit_preamble(&envw, &b, 1, arity) ==
			     (arity >= 1 ? -ERANGE : 0));
		fi_buf_init(&b, p, sizeof(p), STUBS - (1ull << 30));
		ok &= EXPECT("jit: bhi near", !fi_jit_preamble(&env, &b, 1, arity));
	}
	envw.nstubs = 0;
	fi_buf_init(&b, p, sizeof(p), STUBS);
	ok &= EXPECT("jit: bhi without stubs", fi_jit_preamble(&envw, &b, 1, 2) == -ERANGE);
	CHECK("jit: BHI call out of rel32 reach gives -ERANGE", ok);

	ok = true;
	fi_buf_init(&b, p, sizeof(p), STUBS);
	ok &= EXPECT("jit: arity 8", fi_jit_preamble(&env, &b, 1, 8) == -EINVAL);
	ok &= EXPECT("jit: arity -1", fi_jit_preamble(&env, &b, 1, -1) == -EINVAL);
	ok &= EXPECT("jit: reg 16", fi_jit_call(&env, &b, 1, 16, false) == -EINVAL);
	ok &= EXPECT("jit: reg -1", fi_jit_call(&env, &b, 1, -1, false) == -EINVAL);
	ok &= EXPECT("jit: nothing written", b.len == 0);
	memset(p, 0, sizeof(p));
	ok &= EXPECT("jit: zeros are no preamble",
		     fi_jit_read_arity(&env, p, STUBS, -1) == -ENOENT);
	CHECK("jit: bad arity / register give -EINVAL", ok);
}

/* ------------------------------------------------- public API, live */

/* Executable-sized memory within the emitter's BHI reach (or anywhere). */
static uint8_t *map_near(size_t size)
{
	uint64_t lo, hi;

	if (fineibt_jit_reach(&lo, &hi))
		return NULL;
	for (uint64_t at = hi - (64ull << 20); at > lo; at -= (64ull << 20)) {
		void *p = mmap((void *)(uintptr_t)at, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p != MAP_FAILED)
			return p;
		if (hi == UINT64_MAX)
			break;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The caller's copy of a registered module keeps no rehash key. */
static bool key_clear(const struct fi_module *m)
{
	static const struct fineibt_key zero;

	return !memcmp(&m->rehash_key, &zero, sizeof(zero));
}

static bool check_live_mode(const struct mode *m)
{
	const size_t size = 4096;
	struct fineibt_config cfg = { m->mode, m->flags }, got;
	struct fi_jit_env env;
	struct fineibt_hash h, rd;
	const struct fi_module *mod;
	uint8_t *mem, ref[32];
	size_t n, ntraps;
	struct fi_buf b;
	bool ok = true;

	fi_rt_set_config(&cfg, &KEY, true);
	fi_rt_set_active(true);
	ok &= EXPECT("jit: get_config", !fineibt_get_config(&got) &&
		     got.mode == m->mode && got.flags == m->flags);
	h = fineibt_rehash_hash(hashes[0]);
	ok &= EXPECT("jit: rehash_hash",
		     h.val == (m->flags & FINEIBT_F_RAND ?
			       fineibt_rehash(hashes[0], &KEY) : hashes[0]));
	/* No value the API returns gives a word of the key away by xor. */
	if (m->flags & FINEIBT_F_RAND) {
		uint32_t z = fineibt_rehash_hash(0).val, w[4];

		memcpy(w, KEY.bytes, sizeof(w));
		for (size_t k = 0; k < sizeof(hashes) / sizeof(hashes[0]); k++) {
			uint32_t a = fineibt_rehash_hash(hashes[k]).val;
			uint32_t b = fineibt_rehash_hash(hashes[k] ^ 0x100).val;

			ok &= EXPECT("jit: rehash_hash(0), rehash_hash(h) ^ h are no key word",
				     z != w[k] && (a ^ hashes[k]) != w[k]);
			ok &= EXPECT("jit: rehash_hash(h), (h ^ x) do not differ by x",
				     (a ^ b) != 0x100);
		}
		/* Mixed into endbr64, stepped once (test_hash's vector). */
		ok &= EXPECT("jit: the LFSR case steps",
			     fineibt_rehash_hash(hashes[3]).val == 0xfd2f07fau);
	}
	mem = map_near(size);
	if (!EXPECT("jit: map near the stubs", mem))
		return false;
	for (int arity = 0; arity <= FI_MAX_ARITY; arity++) {
		uint8_t *pre = mem + 32 * arity;
		uint64_t ip = (uint64_t)(uintptr_t)pre;

		ok &= EXPECT("jit: emit_preamble -ENOSPC reports the need",
			     fineibt_emit_preamble(pre, 10, ip, h, arity, &n) == -ENOSPC &&
			     n == FINEIBT_JIT_PREAMBLE_LEN);
		ok &= EXPECT("jit: emit_preamble",
			     !fineibt_emit_preamble(pre, 32, ip, h, arity, &n) &&
			     n == FINEIBT_JIT_PREAMBLE_LEN);
		fi_jit_env_current(&env);
		fi_buf_init(&b, ref, sizeof(ref), ip);
		ok &= EXPECT("jit: public == internal",
			     !fi_jit_preamble(&env, &b, h.val, arity) &&
			     !memcmp(ref, pre, n));
		ok &= EXPECT("jit: func_hash round trip",
			     !fineibt_func_hash(pre + FINEIBT_PREAMBLE_SIZE, &rd) &&
			     rd.val == h.val);
		ok &= EXPECT("jit: func_arity round trip",
			     fineibt_func_arity(pre + FINEIBT_PREAMBLE_SIZE) ==
			     (want_form(m, arity) == FI_PRE_FINEIBT ? 0 : arity));
	}
	/* Two call sites, one through rax; register and look at the module. */
	ok &= EXPECT("jit: emit_call",
		     !fineibt_emit_call(mem + 512, 64, (uintptr_t)(mem + 512), h, 11,
					false, &n) && n == FI_CALLSITE_SIZE);
	ok &= EXPECT("jit: emit_call via rax",
		     !fineibt_emit_call(mem + 600, 64, (uintptr_t)(mem + 600), h, 0,
					true, &n) && n == FINEIBT_JIT_CALL_MAX);
	ok &= EXPECT("jit: emit_call -ENOSPC reports the need",
		     fineibt_emit_call(ref, 4, 0, h, 0, true, &n) == -ENOSPC &&
		     n == FINEIBT_JIT_CALL_MAX);
	ok &= EXPECT("jit: a writable region is refused (-EACCES)",
		     fineibt_jit_register(mem, size) == -EACCES);
	ok &= EXPECT("jit: seal", !mprotect(mem, size, PROT_READ | PROT_EXEC));
	ok &= EXPECT("jit: register", !fineibt_jit_register(mem, size));
	ok &= EXPECT("jit: register twice", fineibt_jit_register(mem + 8, 8) == -EEXIST);
	mod = fi_rt_module_at((uintptr_t)mem + 100);
	ntraps = m->mode == FINEIBT_MODE_KCFI || (m->flags & FINEIBT_F_PARANOID) ? 2 : 0;
	ok &= EXPECT("jit: region is a module", mod && mod->text_lo == (uintptr_t)mem);
	ok &= EXPECT("jit: its trap sites", mod && mod->img.ntraps == ntraps);
	if (mod && ntraps == 2)
		ok &= EXPECT("jit: trap site addresses",
			     mod->img.traps[0] == (uintptr_t)mem + 512 + FI_KCFI_CALLER_UD &&
			     mod->img.traps[1] == (uintptr_t)mem + 603 + FI_KCFI_CALLER_UD);
	ok &= EXPECT("jit: unregister", !fineibt_jit_unregister(mem));
	ok &= EXPECT("jit: unregister twice", fineibt_jit_unregister(mem) == -ENOENT);
	ok &= EXPECT("jit: region gone", !fi_rt_module_at((uintptr_t)mem + 100));
	munmap(mem, size);
	return ok;
}

static void test_live(void)
{
	struct fineibt_config got;
	struct fineibt_hash h;
	uint8_t *page;

	for (size_t i = 0; i < NMODES; i++) {
		char name[96];

		snprintf(name, sizeof(name), "jit: public API in process mode %s",
			 modes[i].name);
		CHECK(name, check_live_mode(&modes[i]));
	}

	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK("jit: scratch pages", page != MAP_FAILED))
		return;
	munmap(page, 4096);
	/* func-16 lies in the unmapped page: -EFAULT, no crash. */
	CHECK("jit: func_hash of unmapped memory is -EFAULT",
	      fineibt_func_hash(page + 4096 + 8, &h) == -EFAULT &&
	      fineibt_func_arity(page + 4096 + 8) == -EFAULT);
	CHECK("jit: func_hash of zeros is -ENOENT",
	      fineibt_func_hash(page + 4096 + 64, &h) == -ENOENT &&
	      fineibt_func_arity(page + 4096 + 64) == -ENOENT);
	CHECK("jit: func_hash(NULL)", fineibt_func_hash(NULL, &h) == -EFAULT);
	munmap(page + 4096, 4096);

	fi_rt_set_active(false);
	CHECK("jit: without the runtime the mode is kcfi as compiled",
	      !fineibt_get_config(&got) && got.mode == FINEIBT_MODE_KCFI &&
	      got.flags == 0 && fineibt_rehash_hash(hashes[0]).val == hashes[0]);
}

/*
 * fineibt_jit_register checks its range before reading it: an unmapped or
 * PROT_NONE page is -EFAULT (not a fault in the scan), and a range over a
 * compiled module's registered text is -EEXIST, not a second owner.
 */
static uint8_t *jit_fake_text;

static void test_register_range(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fi_module m = { 0 };

	if (!CHECK("jit range: mmap", p != MAP_FAILED))
		return;
	memset(p, 0xcc, 3 * pg);
	mprotect(p + pg, pg, PROT_NONE);
	munmap(p + 2 * pg, pg);
	CHECK("jit range: a PROT_NONE page is -EFAULT",
	       fineibt_jit_register(p, 2 * pg) == -EFAULT);
	CHECK("jit range: a range running into a PROT_NONE page is -EFAULT",
	       fineibt_jit_register(p + pg - 16, 32) == -EFAULT);
	CHECK("jit range: an unmapped page is -EFAULT",
	       fineibt_jit_register(p + 2 * pg, 64) == -EFAULT);
	CHECK("jit range: nothing was registered",
	       fineibt_jit_unregister(p) == -ENOENT);
	CHECK("jit range: the readable page, writable, is -EACCES",
	       fineibt_jit_register(p, pg) == -EACCES);
	CHECK("jit range: the readable page alone registers once read-only",
	       !mprotect(p, pg, PROT_READ) &&
	       fineibt_jit_register(p, pg) == 0 && fineibt_jit_unregister(p) == 0);

	m.img.path = "compiled";
	m.img.live = true;
	jit_fake_text = fi_test_text(4096);
	m.text_lo = (uint64_t)(uintptr_t)jit_fake_text;
	m.text_hi = m.text_lo + 4096;
	m.cfg = (struct fineibt_config){ FINEIBT_MODE_FINEIBT, 0 };
	m.rehash_key = KEY;
	if (CHECK("jit range: fake module registers", fi_rt_add_module(&m) == 0)) {
		CHECK("jit range: the caller's module copy no longer holds the key",
		       key_clear(&m));
		CHECK("jit range: a region inside a module's text is -EEXIST",
		       fineibt_jit_register(jit_fake_text + 64, 64) == -EEXIST);
		CHECK("jit range: a region overlapping its end is -EEXIST",
		       fineibt_jit_register(jit_fake_text + 4096 - 8,
					    16) == -EEXIST);
		fi_rt_del_module(&m);
	}
	m.rehash_key = KEY;
	/* A registration that fails (the same module twice: -EEXIST) scrubs
	 * the key from the caller's copy too. */
	if (CHECK("jit range: module registers again", fi_rt_add_module(&m) == 0)) {
		m.rehash_key = KEY;
		CHECK("jit range: the second registration fails",
		      fi_rt_add_module(&m) == -EEXIST);
		CHECK("jit range: a failed registration scrubs the key",
		      key_clear(&m));
		fi_rt_del_module(&m);
	}
	munmap(p, 2 * pg);
}

/*
 * A racing writer (docs/protection.md, "Escapes through the runtime's own work"): a thread keeps writing kcfi call
 * sites into a JIT region (process_vm_writev, as protect_escape's race)
 * while it is registered over and over. Writable, the region is refused
 * every time (before, it was scanned twice, count then fill, and a site
 * written in between overran the trap array). Sealed, the writer's bytes
 * no longer land, and the registered trap slots are the sites the sealed
 * bytes hold.
 */
#define RACE_SIZE	8192
static uint8_t *race_mem;
static uint8_t race_site[FI_CALLSITE_SIZE];
static volatile int race_stop;
static unsigned long race_landed;

static void *race_writer(void *arg)
{
	unsigned long off = 0;

	(void)arg;
	while (!race_stop) {
		struct iovec l = { race_site, sizeof(race_site) };
		struct iovec r = { race_mem + 64 + off, sizeof(race_site) };

		if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) > 0)
			race_landed++;
		off = (off + 32) % (RACE_SIZE - 128);
	}
	return NULL;
}

static void test_register_race(void)
{
	struct fineibt_config cfg = { FINEIBT_MODE_KCFI, 0 };
	struct fineibt_hash h = { 0x12345678 };
	const struct fi_module *mod;
	unsigned long refused = 0, landed;
	pthread_t t;
	size_t n;
	int i;

	fi_rt_set_config(&cfg, &(struct fineibt_key){ { 0 } }, true);
	fi_rt_set_active(true);
	race_mem = mmap(NULL, RACE_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!CHECK("jit race: mmap", race_mem != MAP_FAILED) ||
	    !CHECK("jit race: a site to copy",
		   !fineibt_emit_call(race_site, sizeof(race_site), 0, h,
				      FINEIBT_REG_R11, false, &n) &&
		   n == sizeof(race_site)))
		goto out;
	memset(race_mem, 0xcc, RACE_SIZE);
	pthread_create(&t, NULL, race_writer, NULL);
	/* The writer is writing before the registrations start (they ask
	 * the kernel once each and may all be done before it would be). */
	while (!__atomic_load_n(&race_landed, __ATOMIC_RELAXED))
		sched_yield();
	for (i = 0; i < 300; i++) {
		int err = fineibt_jit_register(race_mem, RACE_SIZE);

		if (err == -EACCES)
			refused++;
		else if (!err)
			fineibt_jit_unregister(race_mem);
	}
	race_stop = 1;
	pthread_join(t, NULL);
	CHECK("jit race: the writable region was refused every time",
	      refused == 300 && race_landed > 0);
	memset(race_mem, 0xcc, RACE_SIZE);
	memcpy(race_mem + 4096, race_site, sizeof(race_site));
	mprotect(race_mem, RACE_SIZE, PROT_READ | PROT_EXEC);
	race_stop = 0;
	landed = race_landed;
	pthread_create(&t, NULL, race_writer, NULL);
	for (i = 0; i < 100; i++) {
		if (fineibt_jit_register(race_mem, RACE_SIZE))
			break;
		mod = fi_rt_module_at((uintptr_t)race_mem);
		if (!mod || mod->img.ntraps != 1 ||
		    mod->img.traps[0] != (uintptr_t)race_mem + 4096 + FI_KCFI_CALLER_UD)
			break;
		fineibt_jit_unregister(race_mem);
	}
	race_stop = 1;
	pthread_join(t, NULL);
	CHECK("jit race: sealed, the writer's bytes never land and the one site is registered",
	      i == 100 && race_landed == landed);
out:
	fi_rt_set_active(false);
}

int main(void)
{
	fineibt_set_print(NULL);
	test_patcher_oracle();
	test_forms();
	test_mov_r11();
	test_errors();
	test_live();
	test_register_range();
	test_register_race();
	return fi_check_exit();
}
