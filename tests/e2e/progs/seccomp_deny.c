// SPDX-License-Identifier: MIT
/*
 * seccomp_deny NR PROG [ARG...]: run PROG with system call NR failing
 * with EPERM and every other call allowed, as a systemd unit's
 * SystemCallFilter= that leaves NR out, with SystemCallErrorNumber=EPERM,
 * treats it (tests/e2e/protect_key.sh: mincore). No new privileges, as
 * systemd sets with a filter.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	char *end;

	if (argc < 3) {
		fprintf(stderr, "usage: seccomp_deny NR PROG [ARG...]\n");
		return 2;
	}
	f[1].k = (unsigned int)strtoul(argv[1], &end, 10);
	if (*end || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp_deny");
		return 2;
	}
	execv(argv[2], argv + 2);
	perror("seccomp_deny: exec");
	return 127;
}
