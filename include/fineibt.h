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

#define FINEIBT_VERSION "0.1.0"

/* ------------------------------------------------------------------ modes */

/* The scheme the sequences are in (the kernel's enum cfi_mode). */
enum fineibt_mode {
	FINEIBT_MODE_AUTO = 0,	/* resolved to FINEIBT + PARANOID in userspace */
	FINEIBT_MODE_OFF,	/* callers jump over their check (eb 0c) */
	FINEIBT_MODE_KCFI,	/* clang's kCFI sequences, as compiled */
	FINEIBT_MODE_FINEIBT,	/* callee-side hash check after ENDBR */
};

/* Flags that refine a mode (the rest of the cfi= words). */
enum fineibt_flag {
	FINEIBT_F_RAND		= 1u << 0,	/* rehash with the process seed */
	FINEIBT_F_WARN		= 1u << 1,	/* report and continue */
	FINEIBT_F_PARANOID	= 1u << 2,	/* caller-side check too (fineibt) */
	FINEIBT_F_BHI		= 1u << 3,	/* clobber args on mismatch (fineibt) */
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

/* Resolve AUTO into the concrete userspace default (fineibt + paranoid). */
FINEIBT_API void fineibt_resolve_auto(struct fineibt_config *cfg);

/* Write a canonical cfi= list for @cfg ("fineibt,paranoid,bhi"); returns len. */
FINEIBT_API int fineibt_config_str(const struct fineibt_config *cfg,
				   char *buf, size_t len);

/* ----------------------------------------------------------------- hashes */

/*
 * Re-hash a compile-time kCFI hash with @seed so that neither the result
 * nor its negation reads as an ENDBR-like instruction.
 */
FINEIBT_API uint32_t fineibt_rehash(uint32_t hash, uint32_t seed);

/* Draw a fresh random seed (getrandom); 0 on success. */
FINEIBT_API int fineibt_random_seed(uint32_t *seed);

/* ---------------------------------------------------------- print hook */

enum fineibt_print_level {
	FINEIBT_WARN,
	FINEIBT_INFO,
	FINEIBT_DEBUG,
};

typedef int (*fineibt_print_fn)(enum fineibt_print_level level,
				const char *fmt, va_list ap);

/* Replace the print hook; NULL silences the library. Returns the old one. */
FINEIBT_API fineibt_print_fn fineibt_set_print(fineibt_print_fn fn);

FINEIBT_API const char *fineibt_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FINEIBT_H */
