// SPDX-License-Identifier: MIT
/*
 * seccomp_allow [--errno=N] NR[,NR...] PROG [ARG...]: run PROG under an allow-list
 * of system calls, as systemd's SystemCallFilter= with
 * SystemCallArchitectures=native installs one: a call of another
 * architecture (or the x32 ABI) or one not in the list kills the
 * process (SIGSYS), which is systemd's default action (with --errno=N
 * a call not in the list fails with errno N instead, as with systemd's
 * SystemCallErrorNumber=; another architecture is still killed). No new
 * privileges, as systemd sets with a filter. The numbers come from the
 * test (tests/e2e/cached_unit.sh: systemd-analyze's groups, numbered by
 * <sys/syscall.h>), so no libseccomp is needed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_NR 1024

int main(int argc, char **argv)
{
	static struct sock_filter f[2 * MAX_NR + 8];
	unsigned int nr[MAX_NR], n = 0, k = 0;
	unsigned int deny = SECCOMP_RET_KILL_PROCESS;
	char *s, *end;

	if (argc > 1 && !strncmp(argv[1], "--errno=", 8)) {
		deny = SECCOMP_RET_ERRNO | (atoi(argv[1] + 8) & SECCOMP_RET_DATA);
		argv++;
		argc--;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: seccomp_allow [--errno=N] NR[,NR...] PROG [ARG...]\n");
		return 2;
	}
	for (s = argv[1]; *s && n < MAX_NR; s = *end ? end + 1 : end) {
		nr[n++] = (unsigned int)strtoul(s, &end, 10);
		if (end == s || (*end && *end != ','))
			return fprintf(stderr, "seccomp_allow: bad list\n"), 2;
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, nr));
	/* x32 calls carry bit 30: another ABI */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
			0x40000000, 0, 1);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_KILL_PROCESS);
	/* one test and one return a number: no jump is longer than one */
	for (unsigned int i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
				nr[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
				SECCOMP_RET_ALLOW);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);

	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp_allow: prctl");
		return 1;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "seccomp_allow: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
