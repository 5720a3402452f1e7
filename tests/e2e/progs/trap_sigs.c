/* SPDX-License-Identifier: MIT */
/*
 * tests/e2e/trap_sigs.sh's program (built with fineibt-cc). Commands:
 *   race		a second thread rewrites every saved ip of the trap
 *			on the alternate signal stack to escaped() while the
 *			handler runs; a fatal trap must still kill
 *   sig ENTRY [ill]	install a SIGILL handler through libc entry ENTRY
 *			(signal_c11, ssignal, sigset, sigset_hold, __sigaction,
 *			bsd_signal, sysv_signal, __sysv_signal, sigaction,
 *			sigvec, sigignore, next_sigaction, deepbind,
 *			deepbind_sigset, deepbind_sigvec), then
 *			make a confused call (or, with "ill", a plain ud2 the
 *			program's handler must see)
 */
#define _GNU_SOURCE
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* trap_sigs_c11.c: compiled with -std=c11, no _GNU_SOURCE. */
void install_c11(void (*h)(int));

struct fi_sigvec { void (*sv_handler)(int); int sv_mask, sv_flags; };
extern int compat_sigvec(int, const struct fi_sigvec *, struct fi_sigvec *);
__asm__(".symver compat_sigvec, sigvec@GLIBC_2.2.5");
extern sighandler_t ssignal(int, sighandler_t);
extern sighandler_t bsd_signal(int, sighandler_t);
extern sighandler_t __sysv_signal(int, sighandler_t);
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static char altstack[64 * 1024] __attribute__((aligned(64)));
static volatile int go;

__attribute__((noinline)) int victim(char *p) { return p ? 7 : 8; }

__attribute__((noinline)) int confused_call(void)
{
	int (*volatile f)(long, long) = (int (*)(long, long))(void *)victim;

	return f(1, 2);
}

void escaped(void)
{
	static const char msg[] = "ESCAPED\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(0);
}

static int in_range(uint64_t v)
{
	uint64_t c = (uint64_t)(uintptr_t)confused_call, t = (uint64_t)(uintptr_t)victim;

	return (v >= c && v < c + 256) || (v >= t - 64 && v < t + 16);
}

static void *rewriter(void *arg)
{
	/* The kernel's frame is at the top of the stack: scan the top 16 KiB. */
	size_t n = 16 * 1024 / 8;
	volatile uint64_t *w = (volatile uint64_t *)(altstack + sizeof(altstack)) - n;

	go = 1;
	for (;;) {
		for (size_t i = 0; i < n; i++) {
			if (in_range(w[i]))
				w[i] = (uint64_t)(uintptr_t)escaped;
		}
	}
	return arg;
}

static int race(void)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	pthread_t th;

	if (sigaltstack(&ss, NULL) || pthread_create(&th, NULL, rewriter, NULL))
		return 3;
	while (!go)
		;
	printf("calling\n");
	fflush(stdout);
	printf("returned %d\n", confused_call());
	return 0;
}

static void on_ill(int sig)
{
	static const char msg[] = "handler\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(3);
}

static void on_ill_info(int sig, siginfo_t *si, void *uc)
{
	on_ill(sig);
}

/* Called without a kCFI check: under -static-fineibt dlsym hands out no
 * veneers for libc's functions. */
__attribute__((no_sanitize("kcfi"))) static int
call_sigaction(int (*f)(int, const struct sigaction *, struct sigaction *),
	       const struct sigaction *sa)
{
	return f(SIGILL, sa, NULL);
}

__attribute__((no_sanitize("kcfi"))) static void
call_plugin(void (*f)(void (*)(int)))
{
	f(on_ill);
}

static int install(const char *e)
{
	struct sigaction sa = { .sa_handler = on_ill };

	sigemptyset(&sa.sa_mask);
	if (!strcmp(e, "signal_c11"))
		install_c11(on_ill);
	else if (!strcmp(e, "ssignal"))
		return ssignal(SIGILL, on_ill) == SIG_ERR;
	else if (!strcmp(e, "sigset"))
		return sigset(SIGILL, on_ill) == SIG_ERR;
	else if (!strcmp(e, "sigset_hold"))
		return sigset(SIGILL, SIG_HOLD) == SIG_ERR ||
		       sigset(SIGILL, on_ill) != SIG_HOLD;
	else if (!strcmp(e, "__sigaction"))
		return __sigaction(SIGILL, &sa, NULL);
	else if (!strcmp(e, "bsd_signal"))
		return bsd_signal(SIGILL, on_ill) == SIG_ERR;
	else if (!strcmp(e, "sysv_signal"))
		return sysv_signal(SIGILL, on_ill) == SIG_ERR;
	else if (!strcmp(e, "__sysv_signal"))
		return __sysv_signal(SIGILL, on_ill) == SIG_ERR;
	else if (!strcmp(e, "sigaction"))
		return sigaction(SIGILL, &sa, NULL);
	else if (!strcmp(e, "sigaction_info")) {
		sa.sa_sigaction = on_ill_info;
		sa.sa_flags = SA_SIGINFO;
		return sigaction(SIGILL, &sa, NULL);
	} else if (!strcmp(e, "sigignore")) {
		return sigignore(SIGILL);
	} else if (!strcmp(e, "sigvec")) {
		struct fi_sigvec sv = { .sv_handler = on_ill };

		return compat_sigvec(SIGILL, &sv, NULL);
	} else if (!strcmp(e, "next_sigaction") || !strcmp(e, "default_sigaction")) {
		int (*f)(int, const struct sigaction *, struct sigaction *) =
			dlsym(e[0] == 'n' ? RTLD_NEXT : RTLD_DEFAULT, "sigaction");

		return !f || call_sigaction(f, &sa);
	} else if (!strcmp(e, "deepbind") || !strcmp(e, "deepbind_sigset") ||
		   !strcmp(e, "deepbind_sigvec")) {
		void *h = dlopen(getenv(!e[8] ? "SIGS_PLUGIN" : e[12] == 's' ?
					"SIGS_PLUGIN_SIGSET" : "SIGS_PLUGIN_SIGVEC"),
				 RTLD_NOW | RTLD_DEEPBIND);
		void (*f)(void (*)(int)) = h ? (void (*)(void (*)(int)))dlsym(h, "plugin_install") : NULL;

		if (!f)
			return 1;
		call_plugin(f);
	} else {
		return 1;
	}
	return 0;
}

static sigjmp_buf fake_env;

static void on_ill_jmp(int sig)
{
	siglongjmp(fake_env, 1);
}

/*
 * A SIGILL queued to ourselves with a CPU-looking si_code (ILL_ILLOPN):
 * with a program handler it reaches that handler; afterwards a confused
 * call must still be reported and fatal (the disposition is unchanged).
 * With "nohandler", it kills the process as the kernel would.
 */
static int fake(int handler)
{
	struct sigaction sa = { .sa_handler = on_ill_jmp };
	siginfo_t si;

	sigemptyset(&sa.sa_mask);
	if (handler && sigaction(SIGILL, &sa, NULL))
		return 4;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGILL;
	si.si_code = ILL_ILLOPN;
	if (!sigsetjmp(fake_env, 1))
		syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), SIGILL, &si);
	printf("after fake\n");
	fflush(stdout);
	printf("returned %d\n", confused_call());
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "fake"))
		return fake(argc < 3);
	if (argc > 1 && !strcmp(argv[1], "race"))
		return race();
	if (argc > 2 && !strcmp(argv[1], "sig")) {
		if (install(argv[2])) {
			printf("install failed\n");
			return 4;
		}
		printf("installed\n");
		fflush(stdout);
		if (argc > 3)
			__builtin_trap();
		printf("returned %d\n", confused_call());
		return 0;
	}
	return 1;
}
