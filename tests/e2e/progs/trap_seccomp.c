/* trap_seccomp: under a seccomp filter that kills the process on open(2)
 * and allows everything else (openat included, as a profile written
 * from what glibc calls does), a confused call must still be reported
 * with its names, which the report reads from the program's file
 * (tests/e2e/trap_seccomp.sh). */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*ts_fn)(int);

static long ts_other(const char *s)
{
	return s != NULL;
}

__attribute__((noinline)) int ts_call(ts_fn f, int x)
{
	return f(x) + 1;
}

int main(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]), .filter = insns,
	};
	ts_fn volatile f = (ts_fn)(void *)ts_other;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 2;
	}
	puts("filtered");
	fflush(stdout);
	return ts_call(f, 1);
}
