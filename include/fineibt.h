/* SPDX-License-Identifier: MIT */
/*
 * fineibt: FineIBT control-flow integrity for userspace programs.
 *
 * This header is the whole installed API. Everything else lives in src/ and
 * is private. Functions return 0 or a negative errno unless said otherwise;
 * the library never exits and prints only through fineibt_set_print().
 */
#ifndef FINEIBT_H
#define FINEIBT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(FINEIBT_STATIC)
#define FINEIBT_API __attribute__((visibility("default")))
#else
#define FINEIBT_API
#endif

#define FINEIBT_VERSION "0.2.0"

/* ------------------------------------------------------------------ modes */

/* The scheme the sequences are in (the kernel's enum cfi_mode). */
enum fineibt_mode {
	FINEIBT_MODE_AUTO = 0,	/* resolved by the kernel's rule: fineibt_resolve_auto */
	FINEIBT_MODE_OFF,	/* callers jump over their check (eb 0c) */
	FINEIBT_MODE_KCFI,	/* clang's kCFI sequences, as compiled */
	FINEIBT_MODE_FINEIBT,	/* callee-side hash check after ENDBR */
};

/* Flags that refine a mode (the rest of the cfi= words). */
enum fineibt_flag {
	FINEIBT_F_RAND		= 1u << 0,	/* rehash with the process key */
	FINEIBT_F_WARN		= 1u << 1,	/* report and continue */
	FINEIBT_F_PARANOID	= 1u << 2,	/* caller-side check too (fineibt) */
	FINEIBT_F_BHI		= 1u << 3,	/* clobber args on mismatch (fineibt) */
	FINEIBT_F_SEQ_V618	= 1u << 4,	/* v6.18 sequence set (FINEIBT_SEQ) */
	FINEIBT_F_DEBUG		= 1u << 5,	/* cfi=debug: start-up diagnostics */
};

struct fineibt_config {
	enum fineibt_mode mode;
	unsigned int flags;		/* enum fineibt_flag */
};

/*
 * Parse a cfi= word list ("fineibt,paranoid,warn") into @cfg, starting from
 * the defaults (auto, rand). Words apply left to right. Unknown words and
 * words whose dependency is missing are ignored with one message each
 * ("fineibt: ignoring 'paranoid': needs fineibt"); the return value counts
 * them (0 = everything understood). Words are case-insensitive; spaces and
 * empty words are skipped. A later mode word that leaves fineibt drops
 * paranoid and bhi (with a message).
 * @have_arity says whether the binaries carry kCFI arity (needed for bhi).
 * @msgs, if not NULL, receives the messages, one per line, NUL-terminated
 * and truncated to @msgs_len; if NULL they go to the print hook.
 */
FINEIBT_API int fineibt_parse_cfi(const char *list, bool have_arity,
				  struct fineibt_config *cfg,
				  char *msgs, size_t msgs_len);

/*
 * Resolve AUTO by the kernel's rule (cfi=auto, seed 007's __apply_fineibt):
 * KCFI when the calling process runs without user IBT, FINEIBT + PARANOID
 * when user IBT is enabled for it. Linux reports no user IBT today, so
 * auto means kcfi (rehashed unless norand); the IBT branch is reached only
 * through the test hook FINEIBT_TEST_USER_IBT=1, which a privileged
 * (AT_SECURE) process ignores (docs/runtime.md). Other modes are left as
 * they are.
 */
FINEIBT_API void fineibt_resolve_auto(struct fineibt_config *cfg);

/*
 * Write the canonical cfi= list for @cfg into @buf (NUL-terminated, cut to
 * @len): the one spelling of modes, used by reports, FINEIBT_LOG records,
 * fineibt inspect and demo, and FINEIBT_VERBOSE lines. The mode word, then
 * paranoid, bhi, warn, norand (when not rand and not off), debug and
 * seq=v6.18 (nothing for the default v4 set): "fineibt,paranoid,bhi",
 * "kcfi,warn,seq=v6.18". fineibt_parse_cfi() reads it back to @cfg.
 * Returns the length of the whole list (as snprintf). Async-signal-safe.
 */
FINEIBT_API int fineibt_config_str(const struct fineibt_config *cfg,
				   char *buf, size_t len);

/* ----------------------------------------------------------------- hashes */

/*
 * A rehash key: 128 secret bits. The bytes are SipHash-2-4's key (k0 =
 * bytes 0..7, k1 = bytes 8..15, little-endian). Draw one with
 * fineibt_random_key; a process's own key is never exposed.
 */
struct fineibt_key {
	uint8_t bytes[16];
};

/*
 * Re-hash a compile-time kCFI hash with @key: a keyed permutation of the
 * 32-bit values (a Feistel network over SipHash-2-4; for one key,
 * distinct hashes stay distinct), stepped so that neither the result nor
 * its negation reads as an ENDBR-like instruction. No number of (hash,
 * result) pairs gives the key away short of trying 2^128 keys
 * (docs/protection.md, "The key"; docs/sequences.md has the exact rule).
 */
FINEIBT_API uint32_t fineibt_rehash(uint32_t hash, const struct fineibt_key *key);

/* Draw a fresh random key (getrandom); 0 on success, else -errno. */
FINEIBT_API int fineibt_random_key(struct fineibt_key *key);

/* ---------------------------------------------------------- print hook */

enum fineibt_print_level {
	FINEIBT_WARN,
	FINEIBT_INFO,
	FINEIBT_DEBUG,
};

typedef int (*fineibt_print_fn)(enum fineibt_print_level level,
				const char *fmt, va_list ap);

/*
 * Replace the print hook; NULL silences the library. Returns the old one.
 * The default writes each message to file descriptor 2 in one write(), not
 * through stdio's stderr (a program that reopened or buffered stderr sets
 * a hook of its own to capture them).
 */
FINEIBT_API fineibt_print_fn fineibt_set_print(fineibt_print_fn fn);

FINEIBT_API const char *fineibt_version(void);

/* ------------------------------------------------------------------ JIT */

/*
 * Generated code that takes part in CFI (the kernel's BPF JIT emit_cfi()):
 * functions a JIT emits carry the preamble compiled functions have in this
 * process's mode, so instrumented code may call them through pointers, and
 * the JIT calls out through the same checked call sites. See docs/jit.md.
 *
 * Hashes: a struct fineibt_hash is a RUN-TIME type hash, the value the
 * checks of this process compare (the compile-time kCFI hash, rehashed with
 * the process key unless norand/off). It is a struct so that a compile-time
 * hash (a bare uint32_t) cannot be passed to an emitter by mistake. Get one
 * from a compiled function of the same C type (fineibt_func_hash) or from
 * a compile-time hash (fineibt_rehash_hash); never build one by hand.
 *
 * Emitters write into a caller-provided buffer that will live at run-time
 * address @ip, never allocate, and return 0 or -errno: -EINVAL (bad
 * argument), -ENOSPC (@len too small; *@out_len then says how much is
 * needed), -ERANGE (a rel32 cannot reach from @ip: bhi needs a BHI stub
 * array within +-2 GiB, see fineibt_jit_reach). On error the buffer's
 * contents are unspecified. Sequences depend on the mode: emit after the
 * runtime started (any time in main), never cache bytes across processes.
 */
struct fineibt_hash {
	uint32_t val;
};

/* Bytes from a preamble's start to the function entry (the pointer value). */
#define FINEIBT_PREAMBLE_SIZE	16
/* What fineibt_emit_preamble writes: preamble + the 4-byte func+0 insn. */
#define FINEIBT_JIT_PREAMBLE_LEN 20
/* The most fineibt_emit_call writes (20, plus 3 when @reg is not r11). */
#define FINEIBT_JIT_CALL_MAX	23
/* x86 register numbers for fineibt_emit_call: 0 = rax ... 15 = r15. */
#define FINEIBT_REG_R11		11

/*
 * The process's resolved mode and flags (never FINEIBT_MODE_AUTO). When the
 * runtime has not started (program not built with fineibt-cc) nothing is
 * patched: {FINEIBT_MODE_KCFI, 0}. The key is deliberately not exposed.
 */
FINEIBT_API int fineibt_get_config(struct fineibt_config *cfg);

/*
 * The run-time type hash of instrumented function @func (its entry, i.e.
 * a function pointer), read from its preamble in whatever form it is in:
 * kCFI (movl imm), FineIBT (subl imm), FineIBT-BHI, arity-1 inline.
 * -ENOENT: no preamble there (uninstrumented, or no ENDBR at @func);
 * -EFAULT: the bytes are not readable.
 */
FINEIBT_API int fineibt_func_hash(const void *func, struct fineibt_hash *hash);

/*
 * The kCFI arity (0..7: integer argument registers used, 7 = stack args)
 * of @func, or -ENOENT / -EFAULT. Read from the preamble: the kCFI movl
 * register, the BHI call's stub slot, 1 for the arity-1 inline form. A
 * plain FineIBT preamble no longer holds it: then the arity the module
 * recorded before patching, else 0 (as the kernel's cfi_get_func_arity):
 * in that mode every arity gives the same bytes, so the value is always
 * right to pass back to fineibt_emit_preamble.
 */
FINEIBT_API int fineibt_func_arity(const void *func);

/*
 * A compile-time kCFI hash (clang's __kcfi_typeid_<name>, or the movl imm
 * of an unpatched preamble) as this process's run-time hash. Identity
 * under norand and off.
 */
FINEIBT_API struct fineibt_hash fineibt_rehash_hash(uint32_t compile_time_hash);

/*
 * Emit the preamble of a generated function of type @hash taking @arity
 * (0..7, as fineibt_func_arity) at @ip: the 16-byte preamble plus the
 * instruction at the entry (kcfi/off: endbr64; fineibt: the poisoned
 * ENDBR, or the arity-1 magic under bhi without warn). *@out_len =
 * FINEIBT_JIT_PREAMBLE_LEN: the function's address (what callers get) is
 * @ip + FINEIBT_PREAMBLE_SIZE and its body goes at @ip + *@out_len. Keep
 * @ip 16-byte aligned, as compiled functions are.
 */
FINEIBT_API int fineibt_emit_preamble(void *buf, size_t len, uint64_t ip,
				      struct fineibt_hash hash, int arity,
				      size_t *out_len);

/*
 * Emit, at @ip, a checked indirect call (@tail: tail jump) to a function
 * of type @hash whose address is in register @reg (moved to r11 first
 * unless it is FINEIBT_REG_R11): kcfi check + call *%r11, the FineIBT
 * caller, or the paranoid caller, per mode. Clobbers r10, r11 and flags;
 * the stack must be aligned for a call as usual. A mismatch traps (SIGILL)
 * and is reported like any CFI failure when the code is registered.
 */
FINEIBT_API int fineibt_emit_call(void *buf, size_t len, uint64_t ip,
				  struct fineibt_hash hash, int reg, bool tail,
				  size_t *out_len);

/*
 * Register / withdraw the executable range of generated code, so the trap
 * handler recognises CFI failures raised inside it (checks in compiled
 * code are found through .kcfi_traps, which JIT code has none of) and
 * reports them with plain addresses (JIT code has no symbols). Register
 * once the code is final: registration reads it to find the trap sites of
 * the calls fineibt_emit_call wrote (to change the code, unregister and
 * register again). Returns 0, -EINVAL, -EEXIST (overlaps a registered
 * region, or the text of a compiled module), -EFAULT (a page of the range
 * cannot be read), -ENOMEM, -ENOSPC (the JIT's region table is full);
 * unregister: 0 or -ENOENT (@code is not the start of a region). A
 * withdrawn region's bookkeeping (~500 bytes) is not freed, since a trap
 * handler in another thread may still be reading it.
 */
FINEIBT_API int fineibt_jit_register(const void *code, size_t len);
FINEIBT_API int fineibt_jit_unregister(const void *code);

/*
 * The run-time window [*@lo, *@hi) where emitted preambles reach a BHI
 * stub array with their rel32 call (map JIT memory there, e.g. with an
 * mmap hint); the whole address space when the mode is not bhi.
 */
FINEIBT_API int fineibt_jit_reach(uint64_t *lo, uint64_t *hi);

#ifdef __cplusplus
}
#endif

#endif /* FINEIBT_H */
