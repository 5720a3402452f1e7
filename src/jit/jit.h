/* SPDX-License-Identifier: MIT */
/*
 * The JIT emitter's core, parameterised by an explicit environment (mode,
 * key, BHI stub arrays) instead of the process state, so the unit tests
 * can drive every mode in one process. The public fineibt_emit_*() and
 * fineibt_func_*() functions are these applied to fi_jit_env_current().
 *
 * Hashes here are run-time hashes: the values the checks compare in the
 * environment (compile-time hash, rehashed with the key under rand).
 */
#ifndef FI_JIT_H
#define FI_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fineibt.h"
#include "insn.h"
#include "runtime.h"

/* Bytes of a preamble plus the func+0 instruction: what emit_preamble writes. */
#define FI_JIT_PREAMBLE_LEN	(FI_PREAMBLE_SIZE + 4)
/* Slots in one BHI stub array (__bhi_args .. __bhi_args_end). */
#define FI_BHI_SLOTS		(FI_MAX_ARITY + 1)

/* The runtime's registered arrays plus the library's own. */
#define FI_JIT_MAX_STUBS	(FI_MAX_MODULES + 1)

struct fi_jit_env {
	struct fineibt_config cfg;	/* resolved: never FINEIBT_MODE_AUTO */
	struct fineibt_key key;		/* used when cfg.flags & FINEIBT_F_RAND */
	/*
	 * The process environment: the key is read from the read-only
	 * runtime state at each use and never copied here, so no stack
	 * frame of a public call keeps it (docs/protection.md).
	 */
	bool live_key;
	size_t nstubs;
	uint64_t stubs[FI_JIT_MAX_STUBS];	/* run-time BHI stub arrays */
};

/* The process's environment: fi_rt(), or kcfi-as-compiled when inactive. */
void fi_jit_env_current(struct fi_jit_env *env);

/* Compile-time hash -> the hash the checks compare in @env. */
uint32_t fi_jit_rehash(const struct fi_jit_env *env, uint32_t hash);

/*
 * Preamble (16 bytes) plus func+0 (4 bytes) for run-time @hash and @arity
 * into @b (whose ip is the preamble's address). 0 or -errno (-EINVAL,
 * -ENOSPC, -ERANGE: no BHI stub array within rel32 reach).
 */
int fi_jit_preamble(const struct fi_jit_env *env, struct fi_buf *b,
		    uint32_t hash, int arity);

/*
 * A checked call (or tail jump, @tail) through r11 to a function of
 * run-time type @hash; @reg (0..15) holds the target and is first moved
 * to r11 unless it is r11.
 */
int fi_jit_call(const struct fi_jit_env *env, struct fi_buf *b,
		uint32_t hash, int reg, bool tail);

/*
 * From the FI_JIT_PREAMBLE_LEN bytes @p at run-time @ip (func-16):
 * the hash (0 or -ENOENT when no preamble we know is there) ...
 */
int fi_jit_read_hash(const uint8_t *p, uint64_t ip, uint32_t *hash);

/*
 * ... and the arity, 0..7, or -ENOENT. @mod_arity is the arity the
 * function's module recorded before patching (-1 when unknown), used
 * when the bytes no longer carry it (plain FineIBT).
 */
int fi_jit_read_arity(const struct fi_jit_env *env, const uint8_t *p,
		      uint64_t ip, int mod_arity);

/* The window of preamble addresses that reach a stub array (all without bhi). */
void fi_jit_reach(const struct fi_jit_env *env, uint64_t *lo, uint64_t *hi);

/* fineibt_jit_register/unregister under hidden names (jit.c). */
int fi_jit_register_local(const void *code, size_t len);
int fi_jit_unregister_local(const void *code);

#endif /* FI_JIT_H */
