/* SPDX-License-Identifier: MIT */
/*
 * The cfi= grammar: comma-separated words applied left to right, as the
 * kernel's cfi_parse_cmdline() does. Nothing here is fatal: an unknown word,
 * or a word whose dependency is missing, gets one message and is ignored.
 *
 * Runs in the runtime's constructor, so: no allocation and no stdio; the
 * messages are assembled by hand into the caller's buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "fineibt.h"
#include "insn.h"
#include "options.h"
#include "print.h"

#define FI_WORD_MAX 32		/* longer words are unknown by definition */

struct fi_msgs {
	char *buf;
	size_t len;
	size_t used;
	int count;
	/* The valid words were listed (FINEIBT_CFI=help, an unknown word). */
	bool listed;
	/* Command line (fi_parse_cfi_cli): the first unknown word, shown. */
	bool strict;
	char *bad;
	size_t bad_len;
	bool have_bad;
};

static void fi_msgs_add(struct fi_msgs *m, const char *s)
{
	size_t n = strlen(s);

	if (!m->buf || !m->len)
		return;
	if (m->used + 1 >= m->len)
		return;
	if (n > m->len - m->used - 1)
		n = m->len - m->used - 1;
	memcpy(m->buf + m->used, s, n);
	m->used += n;
	m->buf[m->used] = '\0';
}

/*
 * Every cfi= word, with one line of help: FINEIBT_CFI=help prints the
 * table, an unknown word names the words, the CLI's --cfi= errors too,
 * and tests/e2e/cli_docs.sh checks fineibt-cfi(7) against it.
 */
static const struct {
	const char *word, *help;
} fi_cfi_words[] = {
	{ "auto", "the default: the kernel's rule for this machine (fineibt-cfi(7))" },
	{ "off", "no checks: every call site skips its check" },
	{ "kcfi", "the compiler's kCFI: the caller checks the target's type hash" },
	{ "fineibt", "FineIBT: the callee checks the hash after its ENDBR" },
	{ "paranoid", "with fineibt: the caller checks too (stops naked-ENDBR pivots)" },
	{ "bhi", "with fineibt and kCFI arity: clobber argument registers on a mismatch" },
	{ "norand", "keep the compiler's hashes (default: random per process)" },
	{ "warn", "report a failure and continue (default: report, die of SIGILL)" },
	{ "debug", "verbose start-up: mode, sequence set, one line per module" },
	{ "seq=v4|v6.18", "the sequence set (default v4; also FINEIBT_SEQ)" },
	{ "help", "print this list, then apply the other words" },
};
#define FI_NWORDS (sizeof(fi_cfi_words) / sizeof(fi_cfi_words[0]))

size_t fi_cfi_word_list(char *buf, size_t len)
{
	struct fi_msgs m = { .buf = buf, .len = len };

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < FI_NWORDS; i++) {
		fi_msgs_add(&m, i ? ", " : "");
		fi_msgs_add(&m, fi_cfi_words[i].word);
	}
	return m.used;
}

static void fi_msgs_help(struct fi_msgs *m)
{
	static const char pad[] = "              ";

	m->listed = true;
	if (!m->buf) {
		for (size_t i = 0; i < FI_NWORDS; i++)
			fi_warn("cfi word %s: %s\n", fi_cfi_words[i].word,
				fi_cfi_words[i].help);
		return;
	}
	fi_msgs_add(m, "fineibt: cfi= words (comma-separated, applied left to "
		    "right; fineibt-cfi(7)):\n");
	for (size_t i = 0; i < FI_NWORDS; i++) {
		size_t n = strlen(fi_cfi_words[i].word);

		fi_msgs_add(m, "  ");
		fi_msgs_add(m, fi_cfi_words[i].word);
		fi_msgs_add(m, n < sizeof(pad) - 1 ? pad + n : " ");
		fi_msgs_add(m, fi_cfi_words[i].help);
		fi_msgs_add(m, "\n");
	}
}

/* @word cut to a sane length, without terminal escapes (it comes from
 * the environment or a command line and is printed on stderr). */
static void fi_word_show(char shown[FI_WORD_MAX + 4], const char *word,
			 size_t wlen)
{
	size_t n = wlen > FI_WORD_MAX ? FI_WORD_MAX : wlen;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)word[i];

		shown[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (wlen > FI_WORD_MAX)
		memcpy(shown + FI_WORD_MAX, "...", 4);
	else
		shown[n] = '\0';
}

/* "fineibt: ignoring '<word>': <why>\n". */
static void fi_msgs_ignore(struct fi_msgs *m, const char *word, size_t wlen,
			   const char *why)
{
	char shown[FI_WORD_MAX + 4];

	fi_word_show(shown, word, wlen);
	m->count++;
	if (!m->buf) {
		fi_warn("ignoring '%s': %s\n", shown, why);
		return;
	}
	fi_msgs_add(m, "fineibt: ignoring '");
	fi_msgs_add(m, shown);
	fi_msgs_add(m, "': ");
	fi_msgs_add(m, why);
	fi_msgs_add(m, "\n");
}

/* Command line: remember the first unknown word for the caller's error. */
static void fi_msgs_unknown(struct fi_msgs *m, const char *word, size_t wlen)
{
	char shown[FI_WORD_MAX + 4];

	m->count++;
	if (m->have_bad)
		return;
	m->have_bad = true;
	fi_word_show(shown, word, wlen);
	if (m->bad && m->bad_len) {
		strncpy(m->bad, shown, m->bad_len - 1);
		m->bad[m->bad_len - 1] = '\0';
	}
}

static bool fi_word_is(const char *w, size_t n, const char *name)
{
	if (strlen(name) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = w[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != name[i])
			return false;
	}
	return true;
}

static bool fi_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * In a privileged (AT_SECURE) process the environment belongs to a less
 * privileged caller: the words that weaken protection below the built-in
 * default (auto: kcfi with a random key, since a privileged process never
 * takes the user-IBT test hook) or reveal anything (debug: start-up
 * diagnostics and run-time hashes) are ignored, the ones that strengthen
 * it are honoured. Plain fineibt, weaker than kcfi without IBT (no caller
 * check), is upgraded to fineibt,paranoid by fi_parse. Returns true if @w
 * was refused.
 */
static bool fi_secure_refuses(const char *w, size_t n, struct fi_msgs *m)
{
	static const char *const weak[] = { "off", "warn", "norand", "debug" };

	for (size_t i = 0; i < sizeof(weak) / sizeof(weak[0]); i++) {
		if (fi_word_is(w, n, weak[i])) {
			fi_msgs_ignore(m, w, n, "not allowed in a privileged "
				       "(AT_SECURE) process");
			return true;
		}
	}
	return false;
}

int fi_seq_apply(const char *name, size_t n, struct fineibt_config *cfg)
{
	char buf[FI_WORD_MAX];
	int set;

	if (n >= sizeof(buf))
		return -1;
	for (size_t i = 0; i < n; i++)
		buf[i] = name[i] >= 'A' && name[i] <= 'Z' ?
			 (char)(name[i] - 'A' + 'a') : name[i];
	buf[n] = '\0';
	set = fi_set_parse(buf);
	if (set < 0)
		return -1;
	cfg->flags &= ~FINEIBT_F_SEQ_V618;
	if (set == FI_SET_V618)
		cfg->flags |= FINEIBT_F_SEQ_V618;
	return set;
}

static void fi_apply_word(const char *w, size_t n, bool have_arity,
			  struct fineibt_config *cfg, struct fi_msgs *m)
{
	if (n > 4 && fi_word_is(w, 4, "seq=")) {
		if (fi_seq_apply(w + 4, n - 4, cfg) >= 0)
			return;
		if (m->strict)
			fi_msgs_unknown(m, w, n);
		else
			fi_msgs_ignore(m, w, n, "unknown sequence set (v4, v6.18)");
	} else if (fi_word_is(w, n, "debug")) {
		cfg->flags |= FINEIBT_F_DEBUG;
	} else if (fi_word_is(w, n, "auto")) {
		cfg->mode = FINEIBT_MODE_AUTO;
	} else if (fi_word_is(w, n, "off")) {
		cfg->mode = FINEIBT_MODE_OFF;
		cfg->flags &= ~FINEIBT_F_RAND;
	} else if (fi_word_is(w, n, "kcfi")) {
		cfg->mode = FINEIBT_MODE_KCFI;
	} else if (fi_word_is(w, n, "fineibt")) {
		cfg->mode = FINEIBT_MODE_FINEIBT;
	} else if (fi_word_is(w, n, "norand")) {
		cfg->flags &= ~FINEIBT_F_RAND;
	} else if (fi_word_is(w, n, "warn")) {
		cfg->flags |= FINEIBT_F_WARN;
	} else if (fi_word_is(w, n, "paranoid")) {
		if (cfg->mode == FINEIBT_MODE_FINEIBT)
			cfg->flags |= FINEIBT_F_PARANOID;
		else
			fi_msgs_ignore(m, w, n, "needs fineibt");
	} else if (fi_word_is(w, n, "bhi")) {
		if (!have_arity)
			fi_msgs_ignore(m, w, n, "needs kCFI arity and no loaded function carries one (build with clang >= 21, -fsanitize-kcfi-arity; with only arity-0 functions bhi has nothing to do)");
		else if (cfg->mode == FINEIBT_MODE_FINEIBT)
			cfg->flags |= FINEIBT_F_BHI;
		else
			fi_msgs_ignore(m, w, n, "needs fineibt");
	} else if (fi_word_is(w, n, "help")) {
		if (!m->listed)
			fi_msgs_help(m);
	} else if (m->strict) {
		fi_msgs_unknown(m, w, n);
	} else if (m->listed) {
		fi_msgs_ignore(m, w, n, "unknown cfi option");
	} else {
		char why[256] = "unknown cfi option (valid: ";
		size_t at = strlen(why);

		at += fi_cfi_word_list(why + at, sizeof(why) - at - 1);
		memcpy(why + at, ")", 2);
		m->listed = true;
		fi_msgs_ignore(m, w, n, why);
	}
}

static int fi_parse(const char *list, bool have_arity, bool secure,
		    struct fineibt_config *cfg, struct fi_msgs *m)
{
	const char *p = list ? list : "";

	cfg->mode = FINEIBT_MODE_AUTO;
	cfg->flags = FINEIBT_F_RAND;
	if (m->buf && m->len)
		m->buf[0] = '\0';

	while (*p) {
		const char *w, *e;

		while (*p == ',' || fi_is_space(*p))
			p++;
		w = p;
		while (*p && *p != ',')
			p++;
		e = p;
		while (e > w && fi_is_space(e[-1]))
			e--;
		if (e > w && !(secure && fi_secure_refuses(w, (size_t)(e - w), m)))
			fi_apply_word(w, (size_t)(e - w), have_arity, cfg, m);
	}

	/* A later mode word leaves fineibt: its refinements go with it. */
	if (cfg->mode != FINEIBT_MODE_FINEIBT) {
		if (cfg->flags & FINEIBT_F_PARANOID)
			fi_msgs_ignore(m, "paranoid", 8, "a later word left fineibt");
		if (cfg->flags & FINEIBT_F_BHI)
			fi_msgs_ignore(m, "bhi", 3, "a later word left fineibt");
		cfg->flags &= ~(FINEIBT_F_PARANOID | FINEIBT_F_BHI);
	}
	/*
	 * Plain fineibt has no caller-side check: without IBT it is weaker
	 * than the kcfi default (a naked ENDBR passes it). A privileged
	 * process gets the caller check too (docs/protection.md).
	 */
	if (secure && cfg->mode == FINEIBT_MODE_FINEIBT)
		cfg->flags |= FINEIBT_F_PARANOID;
	return m->count;
}

FINEIBT_API int fineibt_parse_cfi(const char *list, bool have_arity,
				  struct fineibt_config *cfg,
				  char *msgs, size_t msgs_len)
{
	return fi_parse_cfi_secure(list, have_arity, false, cfg, msgs, msgs_len);
}

int fi_parse_cfi_secure(const char *list, bool have_arity, bool secure,
			struct fineibt_config *cfg, char *msgs, size_t msgs_len)
{
	struct fi_msgs m = { .buf = msgs, .len = msgs_len };

	return fi_parse(list, have_arity, secure, cfg, &m);
}

int fi_parse_cfi_cli(const char *list, bool have_arity,
		     struct fineibt_config *cfg, char *msgs, size_t msgs_len,
		     char *bad, size_t bad_len)
{
	struct fi_msgs m = { .buf = msgs, .len = msgs_len, .strict = true,
			     .bad = bad, .bad_len = bad_len };
	int n = fi_parse(list, have_arity, false, cfg, &m);

	return m.have_bad ? -EINVAL : n;
}

bool fi_user_ibt(bool secure)
{
	const char *hook;

	/*
	 * Linux (6.18) enables no IBT for user processes and has no interface
	 * that would report it (ARCH_SHSTK_STATUS knows only SHSTK and WRSS):
	 * the day it does, the query goes here. Until then only the test hook
	 * reaches the IBT branch, and never in a privileged process, whose
	 * environment is a less privileged caller's.
	 */
	if (secure)
		return false;
	hook = getenv(FI_USER_IBT_TEST_HOOK);
	return hook && hook[0] == '1' && !hook[1];
}

void fi_resolve_auto(struct fineibt_config *cfg, bool user_ibt)
{
	/*
	 * The kernel's rule (seed 007, __apply_fineibt): kCFI unless the CPU
	 * enforces IBT; with IBT, FineIBT, paranoid when FRED is absent. A
	 * userspace process is never entered through FRED, so with user IBT:
	 * fineibt,paranoid (the caller-side check is what makes FineIBT safe
	 * against a naked-ENDBR pivot). Without IBT the FineIBT preamble
	 * guards nothing the caller's check does not, and costs a second
	 * check on every call: kcfi (rehashed unless norand).
	 */
	if (cfg->mode != FINEIBT_MODE_AUTO)
		return;
	if (user_ibt) {
		cfg->mode = FINEIBT_MODE_FINEIBT;
		cfg->flags |= FINEIBT_F_PARANOID;
	} else {
		cfg->mode = FINEIBT_MODE_KCFI;
	}
}

FINEIBT_API void fineibt_resolve_auto(struct fineibt_config *cfg)
{
	fi_resolve_auto(cfg, fi_user_ibt(getauxval(AT_SECURE) != 0));
}

static size_t fi_cat(char *buf, size_t len, size_t at, const char *s)
{
	for (; *s; s++, at++) {
		if (at + 1 < len)
			buf[at] = *s;
	}
	if (len)
		buf[at + 1 < len ? at : len - 1] = '\0';
	return at;
}

FINEIBT_API int fineibt_config_str(const struct fineibt_config *cfg,
				   char *buf, size_t len)
{
	static const char *const modes[] = {
		[FINEIBT_MODE_AUTO] = "auto",
		[FINEIBT_MODE_OFF] = "off",
		[FINEIBT_MODE_KCFI] = "kcfi",
		[FINEIBT_MODE_FINEIBT] = "fineibt",
	};
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	at = fi_cat(buf, len, at, (unsigned)cfg->mode < 4 ? modes[cfg->mode] : "?");
	if (cfg->flags & FINEIBT_F_PARANOID)
		at = fi_cat(buf, len, at, ",paranoid");
	if (cfg->flags & FINEIBT_F_BHI)
		at = fi_cat(buf, len, at, ",bhi");
	if (cfg->flags & FINEIBT_F_WARN)
		at = fi_cat(buf, len, at, ",warn");
	if (!(cfg->flags & FINEIBT_F_RAND) && cfg->mode != FINEIBT_MODE_OFF)
		at = fi_cat(buf, len, at, ",norand");
	if (cfg->flags & FINEIBT_F_DEBUG)
		at = fi_cat(buf, len, at, ",debug");
	if (cfg->flags & FINEIBT_F_SEQ_V618)
		at = fi_cat(buf, len, at, ",seq=v6.18");
	return (int)at;
}
