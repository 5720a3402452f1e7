/* SPDX-License-Identifier: MIT */
/*
 * The cfi= grammar (man/fineibt-cfi.7): a table of word lists and what
 * they must give (mode, flags, messages, count), then the edges: lengths,
 * truncation, the print hook, fineibt_resolve_auto, fineibt_config_str.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fineibt.h"
#include "options.h"

#define R	FINEIBT_F_RAND
#define W	FINEIBT_F_WARN
#define P	FINEIBT_F_PARANOID
#define BH	FINEIBT_F_BHI
#define AUTO	FINEIBT_MODE_AUTO
#define OFF	FINEIBT_MODE_OFF
#define KCFI	FINEIBT_MODE_KCFI
#define FIBT	FINEIBT_MODE_FINEIBT

#define NEEDS_FIBT(w)	"fineibt: ignoring '" w "': needs fineibt\n"
#define NEEDS_ARITY	"fineibt: ignoring 'bhi': needs kCFI arity and no loaded function carries one (build with clang >= 21, -fsanitize-kcfi-arity; with only arity-0 functions bhi has nothing to do)\n"
/* The first unknown word of a list names the valid ones; later ones do not. */
#define VALID		" (valid: auto, off, kcfi, fineibt, paranoid, bhi, norand, warn, debug, seq=v4|v6.18, help)"
#define UNKNOWN(w)	"fineibt: ignoring '" w "': unknown cfi option\n"
#define UNKNOWN1(w)	"fineibt: ignoring '" w "': unknown cfi option" VALID "\n"
#define LEFT(w)		"fineibt: ignoring '" w "': a later word left fineibt\n"

struct opt_case {
	const char *in;
	bool arity;
	enum fineibt_mode mode;
	unsigned flags;
	int count;
	const char *msgs;
};

static const struct opt_case cases[] = {
	/* nothing at all: the defaults */
	{ NULL, true, AUTO, R, 0, "" },
	{ "", true, AUTO, R, 0, "" },
	{ ",,", true, AUTO, R, 0, "" },
	{ " , ,\t", true, AUTO, R, 0, "" },
	/* every word alone */
	{ "auto", true, AUTO, R, 0, "" },
	{ "off", true, OFF, 0, 0, "" },
	{ "kcfi", true, KCFI, R, 0, "" },
	{ "fineibt", true, FIBT, R, 0, "" },
	{ "norand", true, AUTO, 0, 0, "" },
	{ "warn", true, AUTO, R | W, 0, "" },
	{ "paranoid", true, AUTO, R, 1, NEEDS_FIBT("paranoid") },
	{ "bhi", true, AUTO, R, 1, NEEDS_FIBT("bhi") },
	{ "bhi", false, AUTO, R, 1, NEEDS_ARITY },
	/* bytes from the environment never reach the terminal raw */
	{ "x\x1b[2Jy\xc3\xa9", true, AUTO, R, 1, UNKNOWN1("x?[2Jy??") },
	/* refinements of fineibt, and their order */
	{ "fineibt,paranoid", true, FIBT, R | P, 0, "" },
	{ "paranoid,fineibt", true, FIBT, R, 1, NEEDS_FIBT("paranoid") },
	{ "fineibt,bhi", true, FIBT, R | BH, 0, "" },
	{ "bhi,fineibt", true, FIBT, R, 1, NEEDS_FIBT("bhi") },
	{ "fineibt,bhi", false, FIBT, R, 1, NEEDS_ARITY },
	{ "kcfi,bhi", false, KCFI, R, 1, NEEDS_ARITY },
	{ "fineibt,paranoid,bhi,warn,norand", true, FIBT, P | BH | W, 0, "" },
	{ "norand,warn,bhi,paranoid,fineibt", true, FIBT, W, 2,
	  NEEDS_FIBT("bhi") NEEDS_FIBT("paranoid") },
	/* a later mode word leaves fineibt: its refinements go */
	{ "fineibt,paranoid,kcfi", true, KCFI, R, 1, LEFT("paranoid") },
	{ "fineibt,bhi,auto", true, AUTO, R, 1, LEFT("bhi") },
	{ "fineibt,paranoid,bhi,off", true, OFF, 0, 2, LEFT("paranoid") LEFT("bhi") },
	{ "fineibt,paranoid,kcfi,fineibt", true, FIBT, R | P, 0, "" },
	{ "fineibt,kcfi", true, KCFI, R, 0, "" },
	/* off clears rand for good; later words keep it cleared */
	{ "off,fineibt", true, FIBT, 0, 0, "" },
	{ "off,auto", true, AUTO, 0, 0, "" },
	{ "warn,off", true, OFF, W, 0, "" },
	{ "fineibt,norand,fineibt", true, FIBT, 0, 0, "" },
	/* spelling: case, spaces, empty words */
	{ "FINEIBT,Paranoid", true, FIBT, R | P, 0, "" },
	{ " fineibt , paranoid ", true, FIBT, R | P, 0, "" },
	{ "\tfineibt\n,\r\nwarn", true, FIBT, R | W, 0, "" },
	{ "fineibt,,,paranoid,", true, FIBT, R | P, 0, "" },
	{ ",fineibt", true, FIBT, R, 0, "" },
	/* unknown words are reported, in their own spelling, and ignored */
	{ "bogus", true, AUTO, R, 1, UNKNOWN1("bogus") },
	{ "fine ibt", true, AUTO, R, 1, UNKNOWN1("fine ibt") },
	{ "fineibt2", true, AUTO, R, 1, UNKNOWN1("fineibt2") },
	{ "finei", true, AUTO, R, 1, UNKNOWN1("finei") },
	{ "Off=1", true, AUTO, R, 1, UNKNOWN1("Off=1") },
	{ "cfi=fineibt", true, AUTO, R, 1, UNKNOWN1("cfi=fineibt") },
	{ "off,Bogus,paranoid", true, OFF, 0, 2,
	  UNKNOWN1("Bogus") NEEDS_FIBT("paranoid") },
	{ "fineibt;paranoid", true, AUTO, R, 1, UNKNOWN1("fineibt;paranoid") },
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct opt_case *c = &cases[i];
		struct fineibt_config cfg = { 99, 0xff };
		char msgs[1024], name[128];
		int n;

		n = fineibt_parse_cfi(c->in, c->arity, &cfg, msgs, sizeof(msgs));
		snprintf(name, sizeof(name), "parse '%s'%s", c->in ? c->in : "(null)",
			 c->arity ? "" : " without arity");
		for (char *p = name; *p; p++) {
			if (*p == '\n' || *p == '\t' || *p == '\r')
				*p = ' ';
		}
		if (!CHECK(name, cfg.mode == c->mode && cfg.flags == c->flags &&
				 n == c->count && !strcmp(msgs, c->msgs)))
			printf("  got mode %d flags %#x count %d msgs '%s'\n",
			       cfg.mode, cfg.flags, n, msgs);
	}
}

static char *repeat(const char *s, size_t times)
{
	size_t n = strlen(s);
	char *r = malloc(n * times + 1);

	for (size_t i = 0; i < times; i++)
		memcpy(r + i * n, s, n);
	r[n * times] = '\0';
	return r;
}

static void test_long_inputs(void)
{
	struct fineibt_config cfg;
	char msgs[256];
	char *s, *w;
	int n;

	/* 10 KB of legal words: the last ones win. */
	s = repeat("kcfi,fineibt,warn,", 600);		/* 10.8 KB */
	n = fineibt_parse_cfi(s, true, &cfg, msgs, sizeof(msgs));
	CHECK("10 KB of words: parsed to the end",
	      strlen(s) > 10000 && n == 0 && cfg.mode == FIBT && cfg.flags == (R | W) &&
	      msgs[0] == '\0');
	free(s);

	/* 10 KB of unknown words: each counted, the messages cut to fit. */
	s = repeat("xy,", 3500);
	memset(msgs, 'Z', sizeof(msgs));
	n = fineibt_parse_cfi(s, true, &cfg, msgs, 200);
	CHECK("10 KB of unknown words: all counted, messages cut at the buffer",
	      n == 3500 && strlen(msgs) == 199 && msgs[250] == 'Z' &&
	      !strncmp(msgs, UNKNOWN1("xy") UNKNOWN("xy"),
		       strlen(UNKNOWN1("xy") UNKNOWN("xy"))) &&
	      cfg.mode == AUTO && cfg.flags == R);
	free(s);

	/* One word of 1000 characters: shown cut, with an ellipsis. */
	w = repeat("a", 1000);
	s = malloc(1100);
	snprintf(s, 1100, "fineibt,%s,paranoid", w);
	n = fineibt_parse_cfi(s, true, &cfg, msgs, sizeof(msgs));
	CHECK("a 1000-character word: one message, the word cut to 32 + '...'",
	      n == 1 && cfg.mode == FIBT && cfg.flags == (R | P) &&
	      !strcmp(msgs, "fineibt: ignoring 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...': unknown cfi option" VALID "\n"));
	/* 32 characters exactly are shown whole. */
	w[32] = '\0';
	n = fineibt_parse_cfi(w, true, &cfg, msgs, sizeof(msgs));
	CHECK("a 32-character word is shown whole",
	      n == 1 && !strcmp(msgs, UNKNOWN1("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")));
	free(s);
	free(w);
}

/* Every buffer size from 0 up: a NUL-terminated prefix, nothing past it. */
static void test_small_msgs(void)
{
	const char *in = "paranoid,bogus,fineibt,paranoid,kcfi";
	const char *full = NEEDS_FIBT("paranoid") UNKNOWN1("bogus") LEFT("paranoid");
	size_t flen = strlen(full);
	bool ok = true;

	for (size_t len = 0; len <= flen + 2; len++) {
		char buf[512];
		struct fineibt_config cfg;
		int n;

		memset(buf, '#', sizeof(buf));
		n = fineibt_parse_cfi(in, true, &cfg, buf, len);
		ok &= EXPECT("small msgs: count and result unchanged",
			     n == 3 && cfg.mode == KCFI && cfg.flags == R);
		ok &= EXPECT("small msgs: canary intact", buf[len] == '#' &&
			     buf[sizeof(buf) - 1] == '#');
		if (len == 0) {
			ok &= EXPECT("small msgs: size 0 writes nothing", buf[0] == '#');
			continue;
		}
		ok &= EXPECT("small msgs: a NUL-terminated prefix",
			     strlen(buf) == (len - 1 < flen ? len - 1 : flen) &&
			     !strncmp(buf, full, strlen(buf)));
	}
	CHECK("msgs buffer of every size 0..full+2: truncated, terminated, no overflow", ok);
}

static char hook_text[1024];
static int hook_calls;
static enum fineibt_print_level hook_level;

static int hook(enum fineibt_print_level level, const char *fmt, va_list ap)
{
	size_t at = strlen(hook_text);

	hook_calls++;
	hook_level = level;
	return vsnprintf(hook_text + at, sizeof(hook_text) - at, fmt, ap);
}

static void test_print_hook(void)
{
	struct fineibt_config cfg;
	fineibt_print_fn old = fineibt_set_print(hook);
	int n;

	hook_text[0] = '\0';
	n = fineibt_parse_cfi("paranoid,nope", true, &cfg, NULL, 0);
	CHECK("msgs NULL: messages go to the print hook as warnings",
	      n == 2 && hook_calls == 2 && hook_level == FINEIBT_WARN &&
	      !strcmp(hook_text, NEEDS_FIBT("paranoid") UNKNOWN1("nope")));
	hook_text[0] = '\0';
	hook_calls = 0;
	n = fineibt_parse_cfi("fineibt,paranoid", true, &cfg, NULL, 0);
	CHECK("msgs NULL: nothing printed when everything is understood",
	      n == 0 && hook_calls == 0);
	fineibt_set_print(NULL);
	n = fineibt_parse_cfi("nope", true, &cfg, NULL, 0);
	CHECK("print hook NULL: silent, still counted", n == 1);
	fineibt_set_print(old);
}

/*
 * auto follows the kernel's rule (seed 007, __apply_fineibt): kcfi
 * without user IBT, fineibt,paranoid with it; other modes unchanged. The
 * public resolver asks the process (no IBT; the test hook, when set and
 * the process is not AT_SECURE, stands for it).
 */
static void test_resolve_auto(void)
{
	static const struct {
		struct fineibt_config in, out, out_ibt;
	} v[] = {
		{ { AUTO, R }, { KCFI, R }, { FIBT, R | P } },
		{ { AUTO, 0 }, { KCFI, 0 }, { FIBT, P } },
		{ { AUTO, R | W }, { KCFI, R | W }, { FIBT, R | W | P } },
		/* explicit modes stay as they are, IBT or not */
		{ { FIBT, R }, { FIBT, R }, { FIBT, R } },
		{ { FIBT, R | BH }, { FIBT, R | BH }, { FIBT, R | BH } },
		{ { KCFI, R }, { KCFI, R }, { KCFI, R } },
		{ { OFF, 0 }, { OFF, 0 }, { OFF, 0 } },
	};
	bool ok = true, pub = true, hook = true;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct fineibt_config c = v[i].in, d = v[i].in, e = v[i].in, f = v[i].in;

		fi_resolve_auto(&c, false);
		fi_resolve_auto(&d, true);
		ok &= EXPECT("resolve_auto", c.mode == v[i].out.mode &&
			     c.flags == v[i].out.flags && d.mode == v[i].out_ibt.mode &&
			     d.flags == v[i].out_ibt.flags);
		unsetenv(FI_USER_IBT_TEST_HOOK);
		fineibt_resolve_auto(&e);
		pub &= EXPECT("resolve_auto: no user IBT in this process",
			      e.mode == v[i].out.mode && e.flags == v[i].out.flags);
		setenv(FI_USER_IBT_TEST_HOOK, "1", 1);
		fineibt_resolve_auto(&f);
		hook &= EXPECT("resolve_auto: the test hook stands for user IBT",
			       f.mode == v[i].out_ibt.mode && f.flags == v[i].out_ibt.flags);
		unsetenv(FI_USER_IBT_TEST_HOOK);
	}
	CHECK("resolve_auto: kcfi without user IBT, fineibt,paranoid with it", ok);
	CHECK("resolve_auto: public resolver, no IBT: kcfi", pub);
	CHECK("resolve_auto: public resolver, test hook: fineibt,paranoid", hook);
	setenv(FI_USER_IBT_TEST_HOOK, "yes", 1);
	CHECK("user_ibt: only the exact value 1 sets the hook", !fi_user_ibt(false));
	setenv(FI_USER_IBT_TEST_HOOK, "1", 1);
	CHECK("user_ibt: the hook, not privileged", fi_user_ibt(false));
	CHECK("user_ibt: never in a privileged (AT_SECURE) process", !fi_user_ibt(true));
	unsetenv(FI_USER_IBT_TEST_HOOK);
}

static void test_config_str(void)
{
	static const struct {
		struct fineibt_config c;
		const char *s;
	} v[] = {
		{ { AUTO, R }, "auto" },
		{ { OFF, 0 }, "off" },
		{ { KCFI, R }, "kcfi" },
		{ { KCFI, 0 }, "kcfi,norand" },
		{ { FIBT, R | P }, "fineibt,paranoid" },
		{ { FIBT, P | BH | W }, "fineibt,paranoid,bhi,warn,norand" },
		{ { OFF, W }, "off,warn" },
	};
	const char *longest = "fineibt,paranoid,bhi,warn,norand";
	bool ok = true;
	char buf[64];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char name[80];
		int n = fineibt_config_str(&v[i].c, buf, sizeof(buf));

		snprintf(name, sizeof(name), "config_str: %s", v[i].s);
		CHECK(name, n == (int)strlen(v[i].s) && !strcmp(buf, v[i].s));
	}
	/* Truncated like snprintf: the full length back, a terminated prefix. */
	for (size_t len = 0; len < strlen(longest) + 2; len++) {
		struct fineibt_config c = { FIBT, P | BH | W };
		int n;

		memset(buf, '#', sizeof(buf));
		n = fineibt_config_str(&c, len ? buf : NULL, len);
		ok &= EXPECT("config_str: returns the full length", n == (int)strlen(longest));
		if (!len)
			continue;
		ok &= EXPECT("config_str: terminated prefix, nothing past len",
			     strlen(buf) == (len - 1 < strlen(longest) ? len - 1 : strlen(longest)) &&
			     !strncmp(buf, longest, strlen(buf)) && buf[len] == '#');
	}
	CHECK("config_str: every buffer size, no overflow", ok);
}

/*
 * Everything the parser can produce prints as a list that parses back to
 * the same config without a message: every combination of words.
 */
static void test_round_trip(void)
{
	static const char *const words[] = {
		"auto", "off", "kcfi", "fineibt", "norand", "warn", "paranoid", "bhi",
	};
	int seen = 0;
	bool ok = true;

	/* Every list of up to 4 words (8^4 = 4096 lists). */
	for (int code = 0; code < 8 * 8 * 8 * 8; code++) {
		char list[64] = "", str[64], msgs[512];
		struct fineibt_config a, b;
		int x = code;

		for (int k = 0; k < 4; k++, x /= 8) {
			strcat(list, words[x % 8]);
			strcat(list, k < 3 ? "," : "");
		}
		fineibt_parse_cfi(list, true, &a, msgs, sizeof(msgs));
		fineibt_config_str(&a, str, sizeof(str));
		ok &= EXPECT("round trip: parses without a message",
			      fineibt_parse_cfi(str, true, &b, msgs, sizeof(msgs)) == 0);
		if (!EXPECT("round trip: same config", a.mode == b.mode && a.flags == b.flags))
			printf("  '%s' -> '%s'\n", list, str);
		ok &= a.mode == b.mode && a.flags == b.flags;
		seen++;
	}
	CHECK("config_str -> parse round trip over all 4096 four-word lists", ok && seen == 4096);
}

/* The command line's parser: unknown words are errors, the rest as usual. */
static void test_cli_strict(void)
{
	struct fineibt_config cfg;
	char msgs[256], bad[64];
	int n;

	n = fi_parse_cfi_cli("fineibt,paranoid,warn", true, &cfg, msgs, sizeof(msgs),
			     bad, sizeof(bad));
	CHECK("cli: known words parse as in the environment",
	      n == 0 && cfg.mode == FIBT && cfg.flags == (R | P | W) && !msgs[0]);
	bad[0] = '\0';
	n = fi_parse_cfi_cli("kcfi,paranoid,nope,zap", true, &cfg, msgs, sizeof(msgs),
			     bad, sizeof(bad));
	CHECK("cli: an unknown word is -EINVAL and names the first one",
	      n == -EINVAL && !strcmp(bad, "nope") && !strstr(msgs, "nope"));
	n = fi_parse_cfi_cli("kcfi,paranoid", true, &cfg, msgs, sizeof(msgs),
			     bad, sizeof(bad));
	CHECK("cli: a missing dependency stays a message",
	      n == 1 && !strcmp(msgs, NEEDS_FIBT("paranoid")));
	n = fi_parse_cfi_cli("\x1b[31mredredredredredredredredredredredred", true, &cfg,
			     msgs, sizeof(msgs), bad, sizeof(bad));
	CHECK("cli: the bad word is cut and cleaned",
	      n == -EINVAL && bad[0] == '?' && strlen(bad) == 32 + 3);
	n = fineibt_parse_cfi("nope", true, &cfg, msgs, sizeof(msgs));
	CHECK("environment: still ignored with a message",
	      n == 1 && !strcmp(msgs, UNKNOWN1("nope")));
}

/* FINEIBT_CFI=help: the words, one line each, then the other words apply. */
static void test_help(void)
{
	static const char *const words[] = { "auto", "off", "kcfi", "fineibt",
		"paranoid", "bhi", "norand", "warn", "debug", "seq=v4|v6.18", "help" };
	struct fineibt_config cfg;
	char msgs[2048], line[64], list[256];
	const char *p;
	bool all = true;
	int n;

	n = fineibt_parse_cfi("help,kcfi", true, &cfg, msgs, sizeof(msgs));
	CHECK("help: no message counted, the other words apply",
	      n == 0 && cfg.mode == KCFI && cfg.flags == R);
	p = "fineibt: cfi= words (comma-separated, applied left to right; fineibt-cfi(7)):\n";
	CHECK("help: a title line first", !strncmp(msgs, p, strlen(p)));
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		snprintf(line, sizeof(line), "\n  %s ", words[i]);
		all &= strstr(msgs, line) != NULL;
	}
	CHECK("help: one line for every word", all);
	p = msgs;
	n = 0;
	while ((p = strstr(p, "\n  ")) != NULL) {
		n++;
		p++;
	}
	CHECK("help: exactly as many lines as words", n == 11);
	fineibt_parse_cfi("help,help,bogus", true, &cfg, msgs, sizeof(msgs));
	CHECK("help twice: listed once; a later unknown word without the list",
	      strstr(msgs, "cfi= words") &&
	      !strstr(strstr(msgs, "cfi= words") + 1, "cfi= words") &&
	      strstr(msgs, UNKNOWN("bogus")) && !strstr(msgs, UNKNOWN1("bogus")));
	fi_cfi_word_list(list, sizeof(list));
	CHECK("the word list as an unknown word's message gives it",
	      !strcmp(list, "auto, off, kcfi, fineibt, paranoid, bhi, norand, warn, debug, seq=v4|v6.18, help"));
}

int main(void)
{
	test_help();
	test_table();
	test_long_inputs();
	test_small_msgs();
	test_print_hook();
	test_resolve_auto();
	test_config_str();
	test_round_trip();
	test_cli_strict();
	return fi_check_exit();
}
