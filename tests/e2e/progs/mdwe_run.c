// SPDX-License-Identifier: MIT
/*
 * mdwe_run prctl|seccomp PROG [ARG...]: run PROG where memory that was
 * writable may not become executable, as systemd's
 * MemoryDenyWriteExecute= makes a service: "prctl" with the kernel's
 * PR_SET_MDWE (Linux 6.3; systemd 253 and later use it), "seccomp" with
 * the filter systemd installs otherwise: mprotect and pkey_mprotect
 * asking for PROT_EXEC, and mmap asking for PROT_WRITE and PROT_EXEC
 * together, fail with EPERM. Exit 2 when the mechanism is unavailable.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MR_PR_SET_MDWE			65
#define MR_PR_MDWE_REFUSE_EXEC_GAIN	1

/* The low word of argument 2 (prot) of the call. */
#define MR_PROT	offsetof(struct seccomp_data, args[2])

static int mr_seccomp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 3, 7),
		/* mprotect, pkey_mprotect: PROT_EXEC refused */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, MR_PROT),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 4, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* mmap: PROT_WRITE with PROT_EXEC refused */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, MR_PROT),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: mdwe_run prctl|seccomp PROG [ARG...]\n");
		return 2;
	}
	if (!strcmp(argv[1], "prctl"))
		err = prctl(MR_PR_SET_MDWE, MR_PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0);
	else
		err = mr_seccomp();
	if (err) {
		fprintf(stderr, "mdwe_run: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "mdwe_run: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
