/* SPDX-License-Identifier: MIT */
/*
 * conc_fork fork: 4 children of a rewritten process make legal indirect
 * calls (exit 0 when right), a fifth a type-confused one (its inherited
 * handler reports it). Prints "fork legal=L bad=STATUS" (L children
 * exited 0; STATUS "sigill" or "exit N").
 * conc_fork exec: prints this process's run-time hash of inc(), then
 * runs itself again (fork + execv) as "conc_fork hash", which prints the
 * new process's: "exec PARENT CHILD".
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fineibt.h"
#include "conc.h"

#define NOINLINE __attribute__((noinline))

NOINLINE static long inc(long x) { return x + 1; }

static conc_fn1_t volatile pinc = inc;

NOINLINE static long confused(conc_fn1_t f, long x)
{
	conc_bad_t g = (conc_bad_t)(void *)f;

	return g("x", x);
}

static unsigned int hash_of_inc(void)
{
	struct fineibt_hash h;

	if (fineibt_func_hash((const void *)inc, &h))
		return 0;
	return h.val;
}

static int child(bool bad)
{
	for (long i = 0; i < 100000; i++)
		if (pinc(i) != i + 1)
			return 1;
	if (bad)
		confused(pinc, 1);
	return 0;
}

static int run_fork(void)
{
	int legal = 0, st;
	pid_t pids[5];

	fflush(stdout);
	for (int i = 0; i < 5; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(child(i == 4));
	}
	for (int i = 0; i < 4; i++)
		if (waitpid(pids[i], &st, 0) > 0 && WIFEXITED(st) && !WEXITSTATUS(st))
			legal++;
	waitpid(pids[4], &st, 0);
	if (WIFSIGNALED(st))
		printf("fork legal=%d bad=%s\n", legal,
		       WTERMSIG(st) == SIGILL ? "sigill" : "othersig");
	else
		printf("fork legal=%d bad=exit %d\n", legal, WEXITSTATUS(st));
	return 0;
}

static int run_exec(char *self)
{
	int fd[2], st;
	char buf[64] = "";
	pid_t pid;

	if (pipe(fd))
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { self, "hash", NULL };

		dup2(fd[1], 1);
		execv(self, argv);
		_exit(127);
	}
	close(fd[1]);
	if (read(fd[0], buf, sizeof(buf) - 1) < 0)
		return 1;
	waitpid(pid, &st, 0);
	printf("exec %08x %s", hash_of_inc(), buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "fork"))
		return run_fork();
	if (argc > 1 && !strcmp(argv[1], "exec"))
		return run_exec(argv[0]);
	if (argc > 1 && !strcmp(argv[1], "hash")) {
		printf("%08x\n", hash_of_inc());
		return 0;
	}
	return 2;
}
