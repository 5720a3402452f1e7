/* SPDX-License-Identifier: MIT */
/*
 * fineibt demo: runs a small program built with fineibt-cc
 * (examples/demo/attack.c) under every mode against every attack and
 * prints what actually happened in each run: a table of observed outcomes,
 * not of expectations.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define DEMO_PROG	"demo/fi-attack"	/* beside build/fineibt */
#define DEMO_INST	"../libexec/fineibt/fi-attack"	/* make install */
#define DEMO_OUT_MAX	4096

struct demo_mode {
	const char *label;
	const char *cfi;
	bool ibt;		/* run with the user-IBT test hook set */
};

struct demo_attack {
	const char *label;
	const char *arg;	/* argument of the attack program */
	const char *extra;	/* appended to the mode's cfi= list */
};

/* Labelled by their cfi= words, the one spelling of modes. */
static const struct demo_mode demo_modes[] = {
	{ "off",			"off" },
	{ "kcfi",			"kcfi" },
	{ "fineibt",			"fineibt" },
	{ "fineibt,paranoid",		"fineibt,paranoid" },
	{ "fineibt,bhi",		"fineibt,bhi" },
	{ "fineibt,paranoid,bhi",	"fineibt,paranoid,bhi" },
	{ "auto",			"auto" },
	{ "auto (user IBT)",		"auto", true },
};

#define DEMO_AUTO	6	/* the rows of auto, without and with IBT */
#define DEMO_AUTO_IBT	7
#define DEMO_PARANOID	3
#define DEMO_LABEL	"%-22s"
#define DEMO_CELL	"  %-20s"

static const struct demo_attack demo_attacks[] = {
	{ "type confusion",	"confusion", "" },
	{ "naked-ENDBR pivot",	"pivot",     "" },
	{ "tail-call confusion", "tailcall", "" },
	{ "confusion + warn",	"confusion", ",warn" },
};

struct demo_run {
	int status;			/* from waitpid */
	char out[DEMO_OUT_MAX];		/* stdout */
	char err[DEMO_OUT_MAX];		/* stderr */
};

static int demo_find_prog(char *path, size_t len)
{
	const char *env = getenv("FINEIBT_DEMO_PROG");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(path, len, "%s", env);
		return access(path, X_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return -errno;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	/* build/ layout, then an installed prefix's libexec */
	snprintf(path, len, "%s/%s", self, DEMO_PROG);
	if (!access(path, X_OK))
		return 0;
	snprintf(path, len, "%s/" DEMO_INST, self);
	return access(path, X_OK) ? -ENOENT : 0;
}

static void demo_slurp(int fd, char *buf, size_t len)
{
	size_t at = 0;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while (at < len - 1 && (n = read(fd, buf + at, len - 1 - at)) > 0)
		at += (size_t)n;
	buf[at] = '\0';
}

/*
 * One run of @prog; -errno when it could not be made (the run's output
 * files, the fork, or the exec, whose errno the child sends back through
 * a close-on-exec pipe). The output is kept in memory files, not in
 * TMPDIR or /tmp, which may not be writable.
 */
static int demo_exec(const char *prog, const char *cfi, bool ibt,
		     const char *arg, struct demo_run *r)
{
	int out = memfd_create("fi-demo-out", MFD_CLOEXEC);
	int err = memfd_create("fi-demo-err", MFD_CLOEXEC);
	int pfd[2] = { -1, -1 }, child_errno = 0;
	pid_t pid;
	int ret = 0;

	if (out < 0 || err < 0 || pipe2(pfd, O_CLOEXEC)) {
		ret = -errno;
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto done;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(out, 1);
		dup2(err, 2);
		setenv("FINEIBT_CFI", cfi, 1);
		/* The IBT branch of auto: the test hook (docs/runtime.md). */
		if (ibt)
			setenv("FINEIBT_TEST_USER_IBT", "1", 1);
		else
			unsetenv("FINEIBT_TEST_USER_IBT");
		execl(prog, prog, arg, (char *)NULL);
		child_errno = errno;
		(void)!write(pfd[1], &child_errno, sizeof(child_errno));
		_exit(127);
	}
	close(pfd[1]);
	pfd[1] = -1;
	if (read(pfd[0], &child_errno, sizeof(child_errno)) ==
	    (ssize_t)sizeof(child_errno))
		ret = -child_errno;
	if (waitpid(pid, &r->status, 0) < 0 && !ret)
		ret = -errno;
	demo_slurp(out, r->out, sizeof(r->out));
	demo_slurp(err, r->err, sizeof(r->err));
done:
	for (int i = 0; i < 2; i++)
		if (pfd[i] >= 0)
			close(pfd[i]);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

/* What the run shows, in a few words. */
static const char *demo_verdict(const struct demo_run *r)
{
	bool reported = strstr(r->err, "fineibt: CFI failure") != NULL;
	bool ran = strstr(r->out, "ATTACK SUCCEEDED") != NULL;

	if (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGILL)
		return reported ? "stopped" : "SIGILL, no report";
	if (WIFSIGNALED(r->status))
		return "crashed";
	if (ran && reported)
		return "reported, ran on";
	if (ran)
		return "NOT STOPPED";
	return "?";
}

static void demo_first_line(const char *s, char *buf, size_t len)
{
	size_t n = strcspn(s, "\n");

	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* The mode a report line names ("...; mode: kcfi)"), or "?" if none. */
static void demo_report_mode(const char *line, char *buf, size_t len)
{
	const char *m = strstr(line, "; mode: ");
	size_t n;

	snprintf(buf, len, "?");
	if (!m)
		return;
	m += strlen("; mode: ");
	n = strcspn(m, ";)");
	snprintf(buf, len, "%.*s", (int)n, m);
}

int cmd_demo_help(void)
{
	printf("Usage: fineibt demo\n"
	       "  Attack a small program built with fineibt-cc (%s beside\n"
	       "  fineibt in a build tree, PREFIX/libexec/fineibt/fi-attack once\n"
	       "  installed; FINEIBT_DEMO_PROG names another) in every mode: a type\n"
	       "  confusion, a pivot to an ENDBR without a hash check, a tail-call\n"
	       "  confusion and a confusion under warn. Each cell of the table is\n"
	       "  what one real run did.\n"
	       "  Exit status: 0 every run was made (whatever it showed), 1 a run\n"
	       "  could not be made (one error line), 2 usage error.\n", DEMO_PROG);
	return 0;
}

int cmd_demo(int argc, char **argv)
{
	char prog[PATH_MAX], example[512] = "", pivot[512] = "", ibt[512] = "";
	char ran[64], ran_ibt[64];
	const size_t nmodes = sizeof(demo_modes) / sizeof(demo_modes[0]);
	const size_t natt = sizeof(demo_attacks) / sizeof(demo_attacks[0]);
	struct demo_run r;
	int failed = 0, nfail = 0, nruns = 0, ret;

	if (argc > 1)
		return cli_usage("demo", "takes no arguments");
	ret = demo_find_prog(prog, sizeof(prog));
	if (ret && getenv("FINEIBT_DEMO_PROG") && *getenv("FINEIBT_DEMO_PROG")) {
		cli_error("demo: FINEIBT_DEMO_PROG=%s: %s", prog, strerror(-ret));
		return CLI_FAIL;
	}
	if (ret) {
		cli_error("demo: no demo program beside this fineibt (%s in a build "
			  "tree, %s once installed) and FINEIBT_DEMO_PROG unset: "
			  "run 'make' (build tree) or 'make install' again", DEMO_PROG,
			  DEMO_INST);
		return CLI_FAIL;
	}
	printf("fineibt demo: %s, built with fineibt-cc, attacked in every mode.\n"
	       "Each cell is what one real run did (stopped = CFI trap, exit by SIGILL).\n\n",
	       prog);
	printf(DEMO_LABEL, "mode (cfi=)");
	for (size_t a = 0; a < natt; a++)
		printf(DEMO_CELL, demo_attacks[a].label);
	printf("\n");
	for (size_t m = 0; m < nmodes; m++) {
		printf(DEMO_LABEL, demo_modes[m].label);
		for (size_t a = 0; a < natt; a++) {
			char cfi[128];

			snprintf(cfi, sizeof(cfi), "%s%s", demo_modes[m].cfi,
				 demo_attacks[a].extra);
			nruns++;
			ret = demo_exec(prog, cfi, demo_modes[m].ibt,
					demo_attacks[a].arg, &r);
			if (ret) {
				if (!nfail++)
					failed = ret;
				printf(DEMO_CELL, "could not run");
				continue;
			}
			printf(DEMO_CELL, demo_verdict(&r));
			if (!example[0] && m == DEMO_AUTO && a == 0)
				demo_first_line(r.err, example, sizeof(example));
			if (!ibt[0] && m == DEMO_AUTO_IBT && a == 0)
				demo_first_line(r.err, ibt, sizeof(ibt));
			if (!pivot[0] && m == DEMO_PARANOID && a == 1)
				demo_first_line(r.err, pivot, sizeof(pivot));
		}
		printf("\n");
		fflush(stdout);
	}
	if (nfail) {
		fflush(stdout);
		cli_error("demo: %d of %d runs of %s could not be made: %s",
			  nfail, nruns, prog, strerror(-failed));
		return CLI_FAIL;
	}
	/* What auto became, read from the runs' own reports, not assumed. */
	demo_report_mode(example, ran, sizeof(ran));
	demo_report_mode(ibt, ran_ibt, sizeof(ran_ibt));
	printf("\nauto ran as: %s (this process: no user IBT); with user IBT "
	       "(test hook FINEIBT_TEST_USER_IBT=1): %s\n", ran, ran_ibt);
	printf("\nA report, from auto mode's type confusion run:\n  %s\n", example);
	printf("And fineibt,paranoid stopping the naked-ENDBR pivot:\n  %s\n\n", pivot);
	printf("kCFI: the caller loads the hash stored 16 bytes before the target and\n"
	       "  compares it with the type it expects; ud2 on mismatch.\n"
	       "FineIBT: the callee checks instead, right after its ENDBR (subl hash, %%r10d);\n"
	       "  a mismatch jumps into the middle of the subl, onto an 0xEA byte (#UD).\n"
	       "  The caller no longer reads the target's memory, but any ENDBR without a\n"
	       "  check behind it (a \"naked\" ENDBR) becomes a landing pad: the pivot column.\n"
	       "paranoid: the caller checks the hash too (a LOCK-prefixed jne raises #UD), so\n"
	       "  a naked ENDBR no longer works.\n"
	       "auto: the kernel's rule. kCFI unless the CPU enforces IBT; with IBT, FineIBT\n"
	       "  with paranoid. Linux enables no IBT for user processes (none to report it\n"
	       "  either), so auto = kcfi: without IBT a FineIBT preamble guards nothing the\n"
	       "  caller's check does not, and costs a second check on every call.\n"
	       "bhi: on a mismatch, the preamble calls a stub that overwrites the argument\n"
	       "  registers with conditional moves, so a mispredicted path cannot use them.\n"
	       "warn: report and continue, as the kernel's cfi=warn.\n"
	       "The sequences of each mode: fineibt seq --asm.\n");
	return 0;
}
