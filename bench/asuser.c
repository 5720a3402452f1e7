// SPDX-License-Identifier: MIT
/*
 * Programs run as another user, measured (bench/cache_startup.py). Not a
 * test.
 *
 * asuser mem N UID PROG [ARGS...]: start N copies of PROG at once as user
 * UID (no capabilities), stop each one at its exit (ptrace,
 * PTRACE_O_TRACEEXIT: its memory still mapped), and once all N are
 * stopped print, per process and summed, what /proc/PID/smaps_rollup says
 * (kB): Rss, Pss, Private_Dirty, Anonymous; then let them exit. The
 * memory a program keeps for its whole run, whatever it does before
 * exiting, for programs whose main is not ours (sqlite's speedtest1,
 * bash). EXITMEM_SMAPS=1: also the first one's mappings with dirty
 * private pages.
 *
 * asuser time UID PROG [ARGS...]: run PROG once as UID (0: as it is),
 * stdin, stdout and stderr on /dev/null; print "wall_us minflt" (fork to
 * exit, and the child's minor faults; bench/hello_startup.sh too).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static long field(const char *txt, const char *name)
{
	const char *p = strstr(txt, name);

	return p ? atol(p + strlen(name)) : -1;
}

/* The child side: quiet, as @uid with no groups and no capabilities. */
static void become(uid_t uid, bool quiet_err)
{
	int fd = open("/dev/null", O_RDWR);

	dup2(fd, 0);
	dup2(fd, 1);
	if (quiet_err)
		dup2(fd, 2);
	if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
		_exit(126);
}

static int time_one(uid_t uid, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	int st;
	pid_t p;

	clock_gettime(CLOCK_MONOTONIC, &a);
	p = fork();
	if (!p) {
		become(uid, true);
		execv(argv[0], argv);
		_exit(127);
	}
	if (p < 0 || wait4(p, &st, 0, &ru) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f %ld\n", (b.tv_sec - a.tv_sec) * 1e6 +
	       (b.tv_nsec - a.tv_nsec) / 1e3, ru.ru_minflt);
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

static int mem(int n, uid_t uid, char **argv);

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "time"))
		return time_one((uid_t)atoi(argv[2]), argv + 3);
	if (argc > 4 && !strcmp(argv[1], "mem") && atoi(argv[2]) > 0)
		return mem(atoi(argv[2]), (uid_t)atoi(argv[3]), argv + 4);
	fprintf(stderr, "usage: asuser time UID PROG [ARGS...]\n"
		"       asuser mem N UID PROG [ARGS...]\n");
	return 2;
}

static int mem(int n, uid_t uid, char **argv)
{
	pid_t *pid;
	long sum[4] = { 0 };

	pid = calloc((size_t)n, sizeof(*pid));
	for (int i = 0; i < n; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			become(uid, !getenv("EXITMEM_STDERR"));
			ptrace(PTRACE_TRACEME, 0, NULL, NULL);
			raise(SIGSTOP);
			execv(argv[0], argv);
			_exit(127);
		}
	}
	/* each stops at its SIGSTOP: trace its exit, let it run */
	for (int i = 0; i < n; i++) {
		int st;

		waitpid(pid[i], &st, 0);
		ptrace(PTRACE_SETOPTIONS, pid[i], NULL,
		       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
		ptrace(PTRACE_CONT, pid[i], NULL, NULL);
	}
	/* until each is at its exit (signals it gets are passed on) */
	for (int i = 0; i < n; i++) {
		for (;;) {
			int st, sig;

			if (waitpid(pid[i], &st, 0) < 0 || !WIFSTOPPED(st))
				break;
			if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)))
				break;
			sig = WSTOPSIG(st);
			ptrace(PTRACE_CONT, pid[i], NULL,
			       (void *)(long)(sig == SIGTRAP || sig == SIGSTOP ? 0 : sig));
		}
	}
	/* EXITMEM_SMAPS=1: the first one's mappings with private pages */
	if (getenv("EXITMEM_SMAPS")) {
		char path[64], line[512], head[512] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/smaps", pid[0]);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			long kb;

			if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
				snprintf(head, sizeof(head), "%s", line);
			else if (sscanf(line, "Private_Dirty: %ld kB", &kb) == 1 && kb)
				printf("%6ld kB %s", kb, head);
		}
		if (f)
			fclose(f);
	}
	for (int i = 0; i < n; i++) {
		char path[64], txt[4096] = "";
		long v[4];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid[i]);
		f = fopen(path, "r");
		if (f) {
			size_t got = fread(txt, 1, sizeof(txt) - 1, f);

			txt[got] = '\0';
			fclose(f);
		}
		v[0] = field(txt, "\nRss:");
		v[1] = field(txt, "\nPss:");
		v[2] = field(txt, "\nPrivate_Dirty:");
		v[3] = field(txt, "\nAnonymous:");
		printf("pid %d rss %ld pss %ld private_dirty %ld anonymous %ld\n",
		       pid[i], v[0], v[1], v[2], v[3]);
		for (int k = 0; k < 4; k++)
			sum[k] += v[k];
	}
	printf("total rss %ld pss %ld private_dirty %ld anonymous %ld\n",
	       sum[0], sum[1], sum[2], sum[3]);
	for (int i = 0; i < n; i++) {
		ptrace(PTRACE_DETACH, pid[i], NULL, NULL);
		waitpid(pid[i], NULL, 0);
	}
	return 0;
}
