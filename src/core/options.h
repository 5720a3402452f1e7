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
 * (off, kcfi, warn, norand) is ignored with one message each ("fineibt:
 * ignoring 'warn': not allowed in a privileged (AT_SECURE) process") and
 * counted in the return value; the others (auto, fineibt, paranoid, bhi)
 * apply as usual, and fineibt keeps paranoid (it is part of the default).
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
 * The valid cfi= words, comma-separated ("auto, off, kcfi, ..."), into
 * @buf; returns the length written. FINEIBT_CFI=help prints them with a
 * line of help each; an unknown word gets this list in its message once.
 */
size_t fi_cfi_word_list(char *buf, size_t len);

#endif
