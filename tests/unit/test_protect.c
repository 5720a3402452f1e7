/* SPDX-License-Identifier: MIT */
/*
 * Runtime self-protection (docs/protection.md), the parts a unit test can
 * drive in one process:
 *   - the cfi= grammar of a privileged (AT_SECURE) process
 *     (fi_parse_cfi_secure): weakening words refused with one message
 *     each, strengthening ones honoured;
 *   - the runtime state: read-only outside its write window, registered
 *     modules deep-copied into the read-only arena (the caller's copy
 *     loses its key), withdrawal by either pointer;
 *   - the seal: after start-up no setter changes the mode, the key or
 *     the handler.
 * Writes that must fault run in a forked child (SIGSEGV expected).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fineibt.h"
#include "options.h"
#include "runtime.h"
#include "trap.h"

#define R	FINEIBT_F_RAND
#define W	FINEIBT_F_WARN
#define P	FINEIBT_F_PARANOID
#define BH	FINEIBT_F_BHI
#define AUTO	FINEIBT_MODE_AUTO
#define OFF	FINEIBT_MODE_OFF
#define FIBT	FINEIBT_MODE_FINEIBT

#define REFUSED(w) "fineibt: ignoring '" w "': not allowed in a privileged (AT_SECURE) process\n"

struct sec_case {
	const char *in;
	bool secure;
	enum fineibt_mode mode;
	unsigned int flags;
	int count;
	const char *msgs;
};

static const struct sec_case sec_cases[] = {
	/* every weakening word, alone: refused, the default stays */
	{ "off", true, AUTO, R, 1, REFUSED("off") },
	{ "kcfi", true, AUTO, R, 1, REFUSED("kcfi") },
	{ "warn", true, AUTO, R, 1, REFUSED("warn") },
	{ "norand", true, AUTO, R, 1, REFUSED("norand") },
	{ " WaRn ", true, AUTO, R, 1, REFUSED("WaRn") },
	/* fineibt keeps the default's paranoid; bhi strengthens: honoured */
	{ "fineibt", true, FIBT, R | P, 0, "" },
	{ "fineibt,paranoid", true, FIBT, R | P, 0, "" },
	{ "fineibt,bhi", true, FIBT, R | P | BH, 0, "" },
	{ "auto", true, AUTO, R, 0, "" },
	/* mixed: each weakening word once, the rest applies */
	{ "fineibt,bhi,warn,norand", true, FIBT, R | P | BH, 2,
	  REFUSED("warn") REFUSED("norand") },
	{ "off,fineibt,kcfi,bhi,warn", true, FIBT, R | P | BH, 3,
	  REFUSED("off") REFUSED("kcfi") REFUSED("warn") },
	/* the grammar's own rules still hold */
	{ "bhi", true, AUTO, R, 1, "fineibt: ignoring 'bhi': needs fineibt\n" },
	{ "kcfi,paranoid", true, AUTO, R, 2,
	  REFUSED("kcfi") "fineibt: ignoring 'paranoid': needs fineibt\n" },
	/* not privileged: everything as the user asked */
	{ "off,warn", false, OFF, W, 0, "" },
	{ "fineibt,norand", false, FIBT, 0, 0, "" },
	{ "kcfi,warn", false, FINEIBT_MODE_KCFI, R | W, 0, "" },
};

static void test_secure_grammar(void)
{
	char name[96], msgs[512];
	bool ok = true;

	for (size_t i = 0; i < sizeof(sec_cases) / sizeof(sec_cases[0]); i++) {
		const struct sec_case *c = &sec_cases[i];
		struct fineibt_config cfg;
		int n = fi_parse_cfi_secure(c->in, true, c->secure, &cfg, msgs,
					    sizeof(msgs));

		snprintf(name, sizeof(name), "secure-grammar[%s%s]", c->in,
			 c->secure ? ",secure" : "");
		ok &= EXPECT(name, cfg.mode == c->mode && cfg.flags == c->flags &&
			     n == c->count && !strcmp(msgs, c->msgs));
	}
	CHECK("secure-grammar: every case", ok);
	/* The public parser is the unprivileged one. */
	{
		struct fineibt_config cfg;

		CHECK("secure-grammar: fineibt_parse_cfi is not secure",
		      fineibt_parse_cfi("off,warn", true, &cfg, msgs, sizeof(msgs)) == 0 &&
		      cfg.mode == OFF && cfg.flags == W);
	}
}

/* ------------------------------------------------------------ the state */

/* Run @fn in a child; true if it died of SIGSEGV. */
static bool segfaults(void (*fn)(void *), void *arg)
{
	struct rlimit no_core = { 0, 0 };
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return false;
	if (!pid) {
		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGSEGV, SIG_DFL);
		fn(arg);
		_exit(0);
	}
	return waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	       WTERMSIG(status) == SIGSEGV;
}

static void poke(void *p)
{
	*(volatile unsigned char *)p ^= 0xff;
}

/* A small module: one view, two traps, two symbols, a path. */
static struct fi_view view;
static uint64_t traps[2] = { 0x1000, 0x1010 };
static struct fi_sym syms[2];
static char symname0[] = "alpha", symname1[] = "beta";
static struct fi_module mod;

static void setup_module(void)
{
	static uint8_t text[64];

	view = (struct fi_view){ .vaddr = 0x1000, .size = sizeof(text),
				 .mem = text, .exec = true };
	syms[0] = (struct fi_sym){ .addr = 0x1000, .size = 16, .name = symname0 };
	syms[1] = (struct fi_sym){ .addr = 0x1010, .size = 16, .name = symname1 };
	mod = (struct fi_module){ 0 };
	mod.img.path = "synthetic-protect";
	mod.img.live = true;
	mod.img.views = &view;
	mod.img.nviews = 1;
	mod.img.traps = traps;
	mod.img.ntraps = 2;
	mod.img.syms = syms;
	mod.img.nsyms = 2;
	mod.text_lo = (uint64_t)(uintptr_t)text;
	mod.text_hi = mod.text_lo + sizeof(text);
	mod.cfg = (struct fineibt_config){ FIBT, R | P };
	memset(&mod.rehash_key, 0x5e, sizeof(mod.rehash_key));
}

static void test_registration(void)
{
	const struct fi_module *c;

	setup_module();
	if (!CHECK("state: add_module", fi_rt_add_module(&mod) == 0))
		return;
	c = fi_rt_module_at(mod.text_lo + 1);
	if (!CHECK("state: the registered module is a copy", c && c != &mod))
		return;
	CHECK("state: deep copy of arrays and names",
	      c->img.views != mod.img.views && c->img.traps != mod.img.traps &&
	      c->img.syms != mod.img.syms && c->img.path != mod.img.path &&
	      c->img.syms[0].name != symname0 &&
	      !strcmp(c->img.syms[1].name, "beta") &&
	      !strcmp(c->img.path, "synthetic-protect") &&
	      c->img.traps[1] == 0x1010 && c->img.views[0].mem == view.mem);
	CHECK("state: the key moved to the copy",
	      c->rehash_key.bytes[0] == 0x5e && c->rehash_key.bytes[15] == 0x5e &&
	      !mod.rehash_key.bytes[0] && !mod.rehash_key.bytes[15]);
	CHECK("state: the copy is the same module for add (-EEXIST)",
	      fi_rt_add_module(&mod) == -EEXIST &&
	      fi_rt_add_module((struct fi_module *)c) == -EEXIST);
	CHECK("state: storage read-only", segfaults(poke, fi_rt_storage(NULL)));
	CHECK("state: module copy read-only", segfaults(poke, (void *)&c->cfg.flags));
	CHECK("state: its trap table read-only", segfaults(poke, (void *)c->img.traps));
	CHECK("state: its symbol names read-only",
	      segfaults(poke, (void *)c->img.syms[0].name));
	CHECK("state: the caller's copy stays writable",
	      !segfaults(poke, &mod.cfg.flags));
	CHECK("state: withdraw by the caller's pointer",
	      fi_rt_del_module(&mod) == 0 && !fi_rt_module_at(mod.text_lo + 1) &&
	      fi_rt_del_module(&mod) == -ENOENT);
	mod.rehash_key.bytes[0] = 1;
	CHECK("state: withdraw by the copy's pointer",
	      fi_rt_add_module(&mod) == 0 &&
	      (c = fi_rt_module_at(mod.text_lo + 1)) && fi_rt_del_module(c) == 0 &&
	      !fi_rt_module_at(mod.text_lo + 1));
	CHECK("state: still read-only after the windows",
	      segfaults(poke, fi_rt_storage(NULL)));
}

/* In a child: seal, then try every setter. Exit status = failures. */
static void sealed_child(void *arg)
{
	struct fineibt_config off = { OFF, 0 }, fib = { FIBT, R | P };
	const struct fineibt_key k = { { 0x12, 0x34 } }, zero = { { 0 } };
	int bad = 0;

	(void)arg;
	bad += fi_rt_set_config(&fib, &k, true) != 0;
	bad += fi_rt_set_active(true) != 0;
	bad += fi_trap_install() != 0;
	fi_rt_seal();
	bad += fi_rt_set_config(&off, &zero, true) != -EPERM;
	bad += fi_rt_set_active(false) != -EPERM;
	bad += fi_trap_uninstall() != -EPERM;
	bad += !fi_trap_installed();
	bad += fi_rt()->cfg.mode != FIBT || memcmp(&fi_rt()->key, &k, sizeof(k)) ||
	       !fi_rt()->active;
	_exit(bad);
}

static void test_seal(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid)
		sealed_child(NULL);
	CHECK("seal: no setter after start-up (config, active, handler)",
	      pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
}

int main(void)
{
	test_secure_grammar();
	test_registration();
	test_seal();
	return fi_check_exit();
}
