/* SPDX-License-Identifier: MIT */
/*
 * The loader's variables as the process started with them
 * (src/core/ldenv.h), in a copy of this test run with a crafted
 * environment: the last LD_BIND_NOW decides and an empty one is not
 * "now"; LD_AUDIT and LD_DYNAMIC_WEAK count when present, even empty;
 * names that merely start or end like them do not; what the program
 * sets later with setenv changes nothing; AT_SECURE is not set in an
 * ordinary process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ldenv.h"

/* The child: its bits against @want (hex), after a setenv of each. */
static int child(const char *want_s)
{
	unsigned int want = (unsigned int)strtoul(want_s, NULL, 16), got;

	/* New names: environ moves to a new array, the initial block stays. */
	setenv("LD_AUDIT", "/nonexistent.so", 1);
	setenv("LD_DYNAMIC_WEAK", "1", 1);
	got = fi_ldenv();
	if (got != want)
		printf("child: bits %#x, expected %#x\n", got, want);
	return got == want && fi_ldenv() == got ? 0 : 1;
}

static bool run(const char *want, char *const env[])
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st;
	pid_t pid;

	if (n <= 0)
		return false;
	self[n] = '\0';
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { self, "child", (char *)want, NULL };

		execve(self, argv, env);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
	char hex[3][16];

	if (argc == 3 && !strcmp(argv[1], "child"))
		return child(argv[2]);

	snprintf(hex[0], sizeof(hex[0]), "%x", FI_LDENV_READ | FI_LDENV_DYNAMIC_WEAK);
	snprintf(hex[1], sizeof(hex[1]), "%x", FI_LDENV_READ | FI_LDENV_BIND_NOW);
	snprintf(hex[2], sizeof(hex[2]), "%x", FI_LDENV_READ | FI_LDENV_AUDIT);
	{
		char *env[] = { "LD_BIND_NOW=1", "LD_BIND_NOW=", "LD_AUDITX=1",
				"LD_DYNAMIC_WEAK=", "LD_BIND_NOWX=1", NULL };

		CHECK("ldenv_last_bind_now_empty_weak", run(hex[0], env));
	}
	{
		char *env[] = { "LD_BIND_NOW=", "XLD_AUDIT=1", "LD_BIND_NOW=1",
				"LD_DYNAMIC_WEA=1", "L=", "LD", NULL };

		CHECK("ldenv_bind_now_not_lookalikes", run(hex[1], env));
	}
	{
		char *env[] = { "LD_AUDIT=", NULL };

		CHECK("ldenv_audit_present", run(hex[2], env));
	}
	CHECK("ldenv_ordinary_not_secure", (fi_ldenv() & FI_LDENV_READ) &&
	      !(fi_ldenv() & FI_LDENV_SECURE));
	return fi_check_exit();
}
