/* SPDX-License-Identifier: MIT */
/*
 * The JIT emitter API (the BPF JIT's emit_cfi() and cfi_get_func_hash() /
 * cfi_get_func_arity() in the seeds): generated code gets the preambles and
 * checked call sites the patcher gives compiled code, in whatever mode the
 * process runs, so instrumented code can call it and it can call back.
 *
 * Every byte comes from the insn.h encoders. Hashes crossing the public API
 * are run-time hashes wrapped in struct fineibt_hash: the value a preamble
 * of this process holds for a type. The two ways to get one are reading a
 * compiled function of the same type (fineibt_func_hash) and rehashing a
 * compile-time hash (fineibt_rehash_hash); a bare uint32_t does not
 * convert, so a compile-time hash cannot reach an emitter by mistake.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fineibt.h"
#include "insn.h"
#include "jit.h"
#include "runtime.h"

/* ------------------------------------------------------------ environment */

/*
 * The process's runtime state: this instance's, or, in a dlmopen
 * namespace's copy of the library, the one it defers to (src/rt/rtone.c),
 * so that the namespace's JIT emits in the process's mode and key.
 */
static const struct fi_runtime *fi_jit_rt(void)
{
	const struct fi_runtime *p = fi_rt()->primary;

	return p ? p : fi_rt();
}

void fi_jit_env_current(struct fi_jit_env *env)
{
	const struct fi_runtime *rt = fi_jit_rt();
	size_t lib_size;

	/* Not a memset: the stub table is large and mostly unused. */
	env->cfg = (struct fineibt_config){ 0 };
	memset(&env->key, 0, sizeof(env->key));
	env->live_key = false;
	env->nstubs = 0;
	if (!rt->active) {
		/* Nothing was patched: every sequence is as clang emitted it. */
		env->cfg.mode = FINEIBT_MODE_KCFI;
		return;
	}
	env->cfg = rt->cfg;
	fineibt_resolve_auto(&env->cfg);
	env->live_key = true;
	for (size_t i = 0; i < rt->nstubs && env->nstubs < FI_JIT_MAX_STUBS - 1; i++)
		env->stubs[env->nstubs++] = rt->stubs[i];
	/* The library's own array is recognised without being registered. */
	env->stubs[env->nstubs++] = (uint64_t)(uintptr_t)fi_bhi_stubs(&lib_size);
}

uint32_t fi_jit_rehash(const struct fi_jit_env *env, uint32_t hash)
{
	/* Exactly the patcher's rule (fi_patch_hash): rehash iff rand. */
	if (env->cfg.flags & FINEIBT_F_RAND)
		return fineibt_rehash(hash, env->live_key ? &fi_jit_rt()->key :
						      &env->key);
	return hash;
}

/* ----------------------------------------------------------------- emit */

static bool fi_jit_is_fineibt(const struct fi_jit_env *env)
{
	return env->cfg.mode == FINEIBT_MODE_FINEIBT;
}

/* The sequence set @env's process runs (FINEIBT_SEQ). */
static int fi_jit_set(const struct fi_jit_env *env)
{
	return env->cfg.flags & FINEIBT_F_SEQ_V618 ? FI_SET_V618 : FI_SET_V4;
}

/* A stub array whose slot @arity a call ending at @call_end can reach. */
static int fi_jit_pick_stubs(const struct fi_jit_env *env, uint64_t call_end,
			     int arity, uint64_t *stubs)
{
	for (size_t i = 0; i < env->nstubs; i++) {
		uint64_t slot = env->stubs[i] + (uint64_t)arity * FI_BHI_SLOT_SIZE;
		int64_t d = (int64_t)(slot - call_end);

		if (d >= INT32_MIN && d <= INT32_MAX) {
			*stubs = env->stubs[i];
			return 0;
		}
	}
	return -ERANGE;
}

static int fi_jit_fineibt_preamble(const struct fi_jit_env *env,
				   struct fi_buf *b, uint32_t hash, int arity)
{
	bool warn = env->cfg.flags & FINEIBT_F_WARN;
	bool inl = arity == 1 && !warn && fi_set_forms(b->set)->arity1;
	size_t at = b->len;
	uint64_t stubs = 0;
	int err;

	fi_emit_fineibt_preamble(b, hash);
	if (b->err || !(env->cfg.flags & FINEIBT_F_BHI)) {
		fi_emit_poison(b);
		return b->err;
	}
	if (arity > 0 && !inl) {
		err = fi_jit_pick_stubs(env, b->ip + at + FI_PREAMBLE_SIZE,
					arity, &stubs);
		if (err)
			return err;
	}
	/* As the patcher does: rewrite the tail that follows the subl. */
	b->len = at + FI_FINEIBT_PREAMBLE_BHI;
	fi_emit_bhi_tail(b, arity, warn, stubs);
	/* The inline form already wrote func+0 (the 0x001f0ff5 magic). */
	if (!inl)
		fi_emit_poison(b);
	return b->err;
}

int fi_jit_preamble(const struct fi_jit_env *env, struct fi_buf *b,
		    uint32_t hash, int arity)
{
	if (arity < 0 || arity > FI_MAX_ARITY)
		return -EINVAL;
	if (b->err)
		return b->err;
	b->set = fi_jit_set(env);
	if (fi_jit_is_fineibt(env))
		return fi_jit_fineibt_preamble(env, b, hash, arity);
	/* kcfi and off: the compiler's preamble and a live ENDBR. */
	fi_emit_kcfi_preamble(b, hash, arity);
	fi_emit_seq(b, &fi_seq_endbr64, 0);
	return b->err;
}

int fi_jit_call(const struct fi_jit_env *env, struct fi_buf *b,
		uint32_t hash, int reg, bool tail)
{
	if (reg < 0 || reg > 15)
		return -EINVAL;
	if (b->err)
		return b->err;
	b->set = fi_jit_set(env);
	fi_emit_mov_r11(b, reg);
	if (!fi_jit_is_fineibt(env)) {
		/*
		 * The kCFI check (jumped over under off, as the patcher leaves
		 * callers), then the call the thunk would make: generated code
		 * has no reason to go through __x86_indirect_thunk_r11.
		 */
		fi_emit_kcfi_check(b, hash, env->cfg.mode == FINEIBT_MODE_OFF);
		fi_emit_seq(b, fi_set_forms(b->set)->kcfi_indirect[tail], 0);
	} else if (env->cfg.flags & FINEIBT_F_PARANOID) {
		fi_emit_paranoid_caller(b, hash, tail);
	} else {
		fi_emit_fineibt_caller(b, hash, tail);
	}
	return b->err;
}

/* ----------------------------------------------------------------- read */

static enum fi_preamble_form fi_jit_classify(const uint8_t *p, uint64_t ip,
					     struct fi_preamble_info *info)
{
	/*
	 * Demand an ENDBR-like func+0 as well: the metadata that tells the
	 * patcher where preambles are is not at hand here, and bytes before
	 * some uninstrumented functions look exactly like a kCFI preamble.
	 */
	if (!fi_is_endbr(p + FI_PREAMBLE_SIZE))
		return FI_PRE_NONE;
	return fi_classify_preamble(p, ip, info);
}

int fi_jit_read_hash(const uint8_t *p, uint64_t ip, uint32_t *hash)
{
	struct fi_preamble_info info;

	if (fi_jit_classify(p, ip, &info) == FI_PRE_NONE)
		return -ENOENT;
	*hash = info.hash;
	return 0;
}

/* Slot number of BHI stub address @target, or -ENOENT. */
static int fi_jit_bhi_slot(const struct fi_jit_env *env, uint64_t target)
{
	for (size_t i = 0; i < env->nstubs; i++) {
		uint64_t off = target - env->stubs[i];

		if (target < env->stubs[i] || off >= FI_BHI_SLOTS * FI_BHI_SLOT_SIZE)
			continue;
		if (off % FI_BHI_SLOT_SIZE || off == 0)
			return -ENOENT;
		return (int)(off / FI_BHI_SLOT_SIZE);
	}
	return -ENOENT;
}

int fi_jit_read_arity(const struct fi_jit_env *env, const uint8_t *p,
		      uint64_t ip, int mod_arity)
{
	struct fi_preamble_info info;

	switch (fi_jit_classify(p, ip, &info)) {
	case FI_PRE_KCFI:
		return info.arity;
	case FI_PRE_FINEIBT_ARITY1:
		return 1;
	case FI_PRE_FINEIBT_BHI:
		return fi_jit_bhi_slot(env, info.bhi_target);
	case FI_PRE_FINEIBT:
		/*
		 * The subl overwrote the arity register. Under bhi this form
		 * means arity 0; otherwise only the module's record (taken
		 * before patching) knows. Without one, 0 as the kernel does:
		 * plain FineIBT emits the same bytes for every arity, so
		 * handing the value back to the emitter stays correct.
		 */
		return mod_arity >= 0 ? mod_arity : 0;
	default:
		return -ENOENT;
	}
}

void fi_jit_reach(const struct fi_jit_env *env, uint64_t *lo, uint64_t *hi)
{
	/* Slack for the slot offset and the preamble; stays far inside rel32. */
	const uint64_t span = (1ull << 31) - (1ull << 20);
	const uint64_t page = 4096;
	uint64_t s = 0;

	*lo = 0;
	*hi = UINT64_MAX;
	if (!fi_jit_is_fineibt(env) || !(env->cfg.flags & FINEIBT_F_BHI))
		return;
	/* The highest array: mmap() hands out addresses from the top down. */
	for (size_t i = 0; i < env->nstubs; i++)
		if (env->stubs[i] > s)
			s = env->stubs[i];
	if (!s)
		return;
	/* Page-aligned, ready for an mmap() hint. */
	*lo = s > span ? (s - span + page - 1) & ~(page - 1) : 0;
	*hi = (s + span) & ~(page - 1);
}

/* ----------------------------------------------------- region registry */

/*
 * A registered region of generated code is published to the runtime as a
 * module of its own: one executable view, no symbols (reports then give
 * plain addresses), and the trap sites of its checked calls in place of
 * .kcfi_traps. The trap handler then decodes CFI failures raised inside
 * JIT code exactly like those of compiled modules.
 */
struct fi_jit_region {
	struct fi_module mod;
	struct fi_view view;
	struct fi_jit_region *next;	/* registered regions, for unregister */
	struct fi_func *funcs;		/* its functions: the coarse check's entries */
	uint64_t traps[];
};

static struct fi_jit_region *fi_jit_regions;
static struct fi_jit_region *fi_jit_retired;	/* unregistered, kept */
static pthread_mutex_t fi_jit_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Is the call site at @p (20 readable bytes, run-time @ip) one that
 * fi_jit_call emits in @env's mode with a trap slot at +12? Matched by
 * emitting the site again for the hash it holds and comparing.
 */
static bool fi_jit_is_site(const struct fi_jit_env *env, const uint8_t *p,
			   uint64_t ip, bool tail)
{
	uint8_t want[FI_CALLSITE_SIZE];
	uint32_t hash = fi_load32(p + FI_KCFI_CALLER_HASH);
	struct fi_buf b;

	if (!fi_jit_is_fineibt(env))
		hash = -hash;		/* kcfi holds -hash */
	fi_buf_init(&b, want, sizeof(want), ip);
	if (fi_jit_call(env, &b, hash, FINEIBT_REG_R11, tail) || b.len != sizeof(want))
		return false;
	return !memcmp(p, want, sizeof(want));
}

/*
 * The trap slots (site + 12, where .kcfi_traps would point) of the call
 * sites in [@lo, @lo + @len), ascending, into @out (NULL: count only).
 * Only kcfi and paranoid callers trap at the call site; off never traps
 * and plain FineIBT traps in the callee's preamble.
 */
static size_t fi_jit_scan(const struct fi_jit_env *env, const uint8_t *lo,
			  size_t len, uint64_t *out, size_t cap)
{
	bool kcfi = env->cfg.mode == FINEIBT_MODE_KCFI;
	bool paranoid = fi_jit_is_fineibt(env) &&
			(env->cfg.flags & FINEIBT_F_PARANOID);
	const struct fi_set_forms *f = fi_set_forms(fi_jit_set(env));
	const struct fi_seq *t = kcfi ? f->kcfi_caller[0] : f->paranoid[0];
	const int fixed = t->hash + 4;	/* 4 opcode bytes after the hash */
	size_t n = 0;

	if ((!kcfi && !paranoid) || len < FI_CALLSITE_SIZE)
		return 0;
	for (size_t i = 0; i <= len - FI_CALLSITE_SIZE; i++) {
		uint64_t ip = (uint64_t)(uintptr_t)(lo + i);

		/* Cheap filter before encoding the candidate again. */
		if (lo[i] != t->bytes[0] || memcmp(lo + i + fixed, t->bytes + fixed, 4))
			continue;
		if (!fi_jit_is_site(env, lo + i, ip, false) &&
		    !fi_jit_is_site(env, lo + i, ip, true))
			continue;
		/* @cap: the count pass's n, should the bytes have changed. */
		if (out && n == cap)
			break;
		if (out)
			out[n] = ip + FI_KCFI_CALLER_UD;
		n++;
		i += FI_CALLSITE_SIZE - 1;
	}
	return n;
}

/*
 * The functions in [@lo, @lo + @len): a 16-aligned entry with a preamble
 * of ours before it (fineibt_emit_preamble's, in any mode's form) and an
 * ENDBR-like func+0. Generated code has no metadata that names them, so
 * the preambles are what is read (as fineibt_func_hash does); they become
 * the region's entries for the coarse check (src/rt/coarse.h). @out
 * NULL: count only.
 */
static size_t fi_jit_funcs(const uint8_t *lo, size_t len, struct fi_func *out,
			   size_t cap)
{
	uint64_t base = (uint64_t)(uintptr_t)lo, e;
	size_t n = 0;
	uint32_t hash;

	e = (base + FI_PREAMBLE_SIZE + FI_PREAMBLE_SIZE - 1) &
	    ~(uint64_t)(FI_PREAMBLE_SIZE - 1);
	for (; len >= FI_JIT_PREAMBLE_LEN && e - base <= len - 4;
	     e += FI_PREAMBLE_SIZE) {
		const uint8_t *p = lo + (e - base) - FI_PREAMBLE_SIZE;

		if (fi_jit_read_hash(p, e - FI_PREAMBLE_SIZE, &hash))
			continue;
		if (out && n == cap)
			break;
		if (out)
			out[n] = (struct fi_func){ .addr = e, .hash = hash,
						   .arity = -1, .endbr = true };
		n++;
	}
	return n;
}

static struct fi_jit_region *fi_jit_region_new(const uint8_t *code, size_t len)
{
	uint64_t lo = (uint64_t)(uintptr_t)code;
	struct fi_jit_region *r;
	struct fi_jit_env env;
	size_t n;

	fi_jit_env_current(&env);
	n = fi_jit_scan(&env, code, len, NULL, 0);
	r = calloc(1, sizeof(*r) + n * sizeof(r->traps[0]));
	if (!r)
		return NULL;
	n = fi_jit_scan(&env, code, len, r->traps, n);
	r->view = (struct fi_view){
		.vaddr = lo, .size = len, .mem = (uint8_t *)code, .exec = true,
	};
	r->mod.img.path = "[jit]";
	r->mod.img.live = true;
	r->mod.img.views = &r->view;
	r->mod.img.nviews = 1;
	r->mod.img.traps = r->traps;
	r->mod.img.ntraps = n;
	n = fi_jit_funcs(code, len, NULL, 0);
	r->funcs = n ? calloc(n, sizeof(*r->funcs)) : NULL;
	if (n && !r->funcs) {
		free(r);
		return NULL;
	}
	r->mod.img.funcs = r->funcs;
	r->mod.img.nfuncs = fi_jit_funcs(code, len, r->funcs, n);
	r->mod.text_lo = lo;
	r->mod.text_hi = lo + len;
	r->mod.patched = true;
	r->mod.cfg = env.cfg;
	r->mod.rehash_key = env.key;
	return r;
}

/*
 * Whether every page of [@code, @code + @len) can be read, asked of the
 * kernel (one byte per page through process_vm_readv on ourselves) so that
 * a bad range is an error, not a fault inside the scan. Used only where
 * the kernel's view of the mappings cannot be had (fi_jit_mapped).
 */
static bool fi_jit_readable(const uint8_t *code, size_t len)
{
	uint64_t lo = (uint64_t)(uintptr_t)code, end = lo + len;
	uint64_t page = lo & ~(uint64_t)4095;
	uint8_t byte;

	for (; page < end; page += 4096) {
		uint64_t at = page < lo ? lo : page;

		if (fi_rt_read_self(&byte, at, 1) != 1)
			return false;
		if (page + 4096 < page)
			break;
	}
	return true;
}

/*
 * [@lo, @hi) as the kernel maps it (rtverify.c: one query per mapping):
 * 0 when every byte is readable and none writable, -EFAULT when some is
 * not mapped or not readable, -EACCES when some is writable. A region
 * registered while writable could change under the scan and after it: the
 * trap slots the handler reads would no longer be those of the code that
 * runs, and any write would be code. Where the kernel cannot be asked (no
 * /proc) only readability is checked.
 */
static int fi_jit_mapped(uint64_t lo, uint64_t hi)
{
	bool writable = false;
	struct fi_vma v;
	int err;

	for (uint64_t at = lo; at < hi; at = v.hi) {
		err = fi_rt_vma(at, &v);
		if (err == -ENOENT)
			return -EFAULT;
		if (err)
			return fi_jit_readable((const uint8_t *)(uintptr_t)lo,
					       hi - lo) ? 0 : -EFAULT;
		if (!v.r || v.hi <= at)
			return -EFAULT;
		writable |= v.w;
	}
	return writable ? -EACCES : 0;
}

FINEIBT_API int fineibt_jit_register(const void *code, size_t len)
{
	uint64_t lo = (uint64_t)(uintptr_t)code;
	struct fi_jit_region *r;
	int err;

	if (fi_rt()->primary)
		return fi_rt()->primary->self.jit_register(code, len);
	if (!code || !len || lo + len < lo)
		return -EINVAL;
	/* Compiled modules are the runtime's: a JIT region over one would
	 * give its traps a second owner. */
	if (fi_rt_range_owned(lo, lo + len))
		return -EEXIST;
	/* What is published is what runs: never writable while registered. */
	err = fi_jit_mapped(lo, lo + len);
	if (err)
		return err;
	pthread_mutex_lock(&fi_jit_lock);
	for (r = fi_jit_regions; r; r = r->next) {
		if (lo < r->mod.text_hi && r->mod.text_lo < lo + len) {
			err = -EEXIST;
			goto out;
		}
	}
	r = fi_jit_region_new(code, len);
	err = r ? fi_rt_add_jit(&r->mod, lo, lo + len) : -ENOMEM;
	if (err) {
		if (r)
			free(r->funcs);
		free(r);
		goto out;
	}
	/* The registered copy has their bitmap; the list was for it only. */
	free(r->funcs);
	r->funcs = NULL;
	r->mod.img.funcs = NULL;
	r->mod.img.nfuncs = 0;
	r->next = fi_jit_regions;
	fi_jit_regions = r;
out:
	pthread_mutex_unlock(&fi_jit_lock);
	return err;
}

FINEIBT_API int fineibt_jit_unregister(const void *code)
{
	uint64_t lo = (uint64_t)(uintptr_t)code;
	struct fi_jit_region **pp, *r;
	const void *key = NULL;
	int err;

	if (fi_rt()->primary)
		return fi_rt()->primary->self.jit_unregister(code);
	pthread_mutex_lock(&fi_jit_lock);
	/*
	 * The read-only table says which region starts at @code; the list
	 * (heap, writable) only which record to retire: a forged entry once
	 * made this withdraw another, live region, whose traps then went to
	 * the program's SIGILL handler undecoded.
	 */
	err = fi_rt_del_jit(lo, &key);
	for (pp = &fi_jit_regions; !err && (r = *pp); pp = &r->next) {
		if (&r->mod != key)
			continue;
		*pp = r->next;
		/*
		 * Not freed: a trap handler in another thread may still be
		 * reading it (runtime.h, fi_rt_del_module). About 500 bytes
		 * per region, plus 8 per checked call site.
		 */
		r->next = fi_jit_retired;
		fi_jit_retired = r;
		break;
	}
	pthread_mutex_unlock(&fi_jit_lock);
	return err;
}

/* The two above, whatever the lookup order binds their names to (load/start.c
 * publishes them for a dlmopen namespace's copy: rt/rtone.c). */
int fi_jit_register_local(const void *code, size_t len)
	__attribute__((alias("fineibt_jit_register"), visibility("hidden")));
int fi_jit_unregister_local(const void *code)
	__attribute__((alias("fineibt_jit_unregister"), visibility("hidden")));

/* ------------------------------------------------------------ public API */

FINEIBT_API int fineibt_get_config(struct fineibt_config *cfg)
{
	struct fi_jit_env env;

	if (!cfg)
		return -EINVAL;
	fi_jit_env_current(&env);
	*cfg = env.cfg;
	return 0;
}

FINEIBT_API struct fineibt_hash fineibt_rehash_hash(uint32_t compile_time_hash)
{
	struct fi_jit_env env;

	fi_jit_env_current(&env);
	return (struct fineibt_hash){ .val = fi_jit_rehash(&env, compile_time_hash) };
}

/*
 * Copy the preamble window of @func (func-16 .. func+3) without trusting
 * that it is mapped: process_vm_readv on ourselves fails with EFAULT
 * instead of faulting. Where that syscall is unavailable (seccomp), read
 * directly only inside code we know: a module's text (JIT regions included).
 */
static int fi_jit_peek(const void *func, uint8_t *p)
{
	uint64_t at = (uint64_t)(uintptr_t)func - FI_PREAMBLE_SIZE;
	const struct fi_module *m;
	ssize_t n;

	if (!func || (uint64_t)(uintptr_t)func < FI_PREAMBLE_SIZE)
		return -EFAULT;
	n = fi_rt_read_self(p, at, FI_JIT_PREAMBLE_LEN);
	if (n == FI_JIT_PREAMBLE_LEN)
		return 0;
	if (n >= 0 || errno == EFAULT)
		return -EFAULT;
	/* Registered JIT regions are modules too. */
	m = fi_rt_module_at(at);
	if (m && at + FI_JIT_PREAMBLE_LEN <= m->text_hi) {
		memcpy(p, (const void *)(uintptr_t)at, FI_JIT_PREAMBLE_LEN);
		return 0;
	}
	return -EFAULT;
}

FINEIBT_API int fineibt_func_hash(const void *func, struct fineibt_hash *hash)
{
	uint8_t p[FI_JIT_PREAMBLE_LEN];
	uint32_t h;
	int err;

	if (!hash)
		return -EINVAL;
	err = fi_jit_peek(func, p);
	if (!err)
		err = fi_jit_read_hash(p, (uint64_t)(uintptr_t)func - FI_PREAMBLE_SIZE, &h);
	if (err)
		return err;
	hash->val = h;
	return 0;
}

/* The arity the function's module recorded when it was loaded, or -1. */
static int fi_jit_module_arity(uint64_t func)
{
	const struct fi_module *m = fi_rt_module_at(func);

	return m ? fi_module_arity(m, func - m->img.bias) : -1;
}

FINEIBT_API int fineibt_func_arity(const void *func)
{
	uint64_t addr = (uint64_t)(uintptr_t)func;
	uint8_t p[FI_JIT_PREAMBLE_LEN];
	struct fi_jit_env env;
	int err;

	err = fi_jit_peek(func, p);
	if (err)
		return err;
	fi_jit_env_current(&env);
	return fi_jit_read_arity(&env, p, addr - FI_PREAMBLE_SIZE,
				 fi_jit_module_arity(addr));
}

/* One public emit request: a preamble (@arity) or a call (@reg, @tail). */
struct fi_jit_req {
	bool call;
	uint32_t hash;
	int arity;
	int reg;
	bool tail;
};

static int fi_jit_emit(const struct fi_jit_env *env, struct fi_buf *b,
		       const struct fi_jit_req *rq)
{
	if (rq->call)
		return fi_jit_call(env, b, rq->hash, rq->reg, rq->tail);
	return fi_jit_preamble(env, b, rq->hash, rq->arity);
}

/*
 * Emit @rq into @buf; on -ENOSPC, run it again into scratch space so
 * @out_len can say how much room it needs.
 */
#define FI_JIT_SCRATCH	64

static int fi_jit_emit_sized(void *buf, size_t len, uint64_t ip,
			     const struct fi_jit_req *rq, size_t *out_len)
{
	uint8_t scratch[FI_JIT_SCRATCH];
	struct fi_jit_env env;
	struct fi_buf b;
	int err, err2;

	if (!buf && len)
		return -EINVAL;
	fi_jit_env_current(&env);
	fi_buf_init(&b, buf, len, ip);
	err = fi_jit_emit(&env, &b, rq);
	if (err == -ENOSPC) {
		fi_buf_init(&b, scratch, sizeof(scratch), ip);
		/* Unless it would fail anyway: say why instead. */
		err2 = fi_jit_emit(&env, &b, rq);
		if (err2)
			err = err2;
	}
	if (out_len)
		*out_len = !err || err == -ENOSPC ? b.len : 0;
	return err;
}

FINEIBT_API int fineibt_emit_preamble(void *buf, size_t len, uint64_t ip,
				      struct fineibt_hash hash, int arity,
				      size_t *out_len)
{
	const struct fi_jit_req rq = { .hash = hash.val, .arity = arity };

	return fi_jit_emit_sized(buf, len, ip, &rq, out_len);
}

FINEIBT_API int fineibt_emit_call(void *buf, size_t len, uint64_t ip,
				  struct fineibt_hash hash, int reg, bool tail,
				  size_t *out_len)
{
	const struct fi_jit_req rq = {
		.call = true, .hash = hash.val, .reg = reg, .tail = tail,
	};

	return fi_jit_emit_sized(buf, len, ip, &rq, out_len);
}

FINEIBT_API int fineibt_jit_reach(uint64_t *lo, uint64_t *hi)
{
	struct fi_jit_env env;

	if (!lo || !hi)
		return -EINVAL;
	fi_jit_env_current(&env);
	fi_jit_reach(&env, lo, hi);
	return 0;
}
