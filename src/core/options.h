/* SPDX-License-Identifier: MIT */
/* The cfi= grammar's internal entry points (src/core/options.c). */
#ifndef FI_OPTIONS_H
#define FI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "fineibt.h"

/*
 * fineibt_parse_cfi() with @secure: the list comes from the environment
 * of a privileged (AT_SECURE: setuid, setgid, file capabilities) process.
 * Then every word that weakens protection below the built-in default
 * (auto = kcfi, rehashed) or reveals anything (off, warn, norand, debug)
 * is ignored with one message each ("fineibt: ignoring 'warn': not
 * allowed in a privileged (AT_SECURE) process") and counted in the return
 * value; the others (auto, kcfi, fineibt, paranoid, bhi, seq=) apply as
 * usual, and fineibt gets paranoid (plain FineIBT has no caller check:
 * without IBT it is weaker than kcfi).
 */
int fi_parse_cfi_secure(const char *list, bool have_arity, bool secure,
			struct fineibt_config *cfg, char *msgs, size_t msgs_len);

/*
 * Select the sequence set named by the @n bytes at @name ("v4", "v6.18",
 * case-insensitive) in @cfg (FINEIBT_F_SEQ_V618). Returns the FI_SET_*
 * chosen, or -1 (and @cfg untouched) for an unknown name.
 */
int fi_seq_apply(const char *name, size_t n, struct fineibt_config *cfg);

/*
 * fineibt_parse_cfi() for a command line (fineibt patch --cfi=): an unknown
 * word is an error there, not a message. Returns -EINVAL with the first
 * unknown word (cut and cleaned for printing) in @bad; otherwise the count
 * of ignored words, whose messages (missing dependency) are in @msgs.
 * The environment variable keeps the kernel's "ignore with a message".
 */
int fi_parse_cfi_cli(const char *list, bool have_arity,
		     struct fineibt_config *cfg, char *msgs, size_t msgs_len,
		     char *bad, size_t bad_len);

/*
 * The environment variable that stands for "user IBT is enabled for this
 * process": a test hook, since Linux has no interface that reports user
 * IBT (docs/runtime.md, "auto"). Read only when not AT_SECURE.
 */
#define FI_USER_IBT_TEST_HOOK	"FINEIBT_TEST_USER_IBT"

/*
 * Whether user IBT is enabled for this process: the test hook set to "1",
 * and never when @secure (AT_SECURE, or read as such).
 */
bool fi_user_ibt(bool secure);

/*
 * Resolve FINEIBT_MODE_AUTO by the kernel's rule: kcfi without user IBT,
 * fineibt,paranoid with it (fineibt_resolve_auto asks fi_user_ibt).
 */
void fi_resolve_auto(struct fineibt_config *cfg, bool user_ibt);

/*
 * The valid cfi= words, comma-separated ("auto, off, kcfi, ..."), into
 * @buf; returns the length written. FINEIBT_CFI=help prints them with a
 * line of help each; an unknown word gets this list in its message once.
 */
size_t fi_cfi_word_list(char *buf, size_t len);

#endif
