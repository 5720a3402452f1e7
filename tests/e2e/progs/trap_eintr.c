/* trap_eintr: a CFI failure reported into a full pipe while a timer's
 * signal, whose handler has no SA_RESTART, interrupts the blocked write
 * every 20 ms (tests/e2e/trap_eintr.sh). Standard error is a pipe the program
 * fills first (to its last byte) and the reader drains only later.
 * argv[1] "own": the check of this (rewritten) program; "compiled": the
 * check of a kCFI library the runtime leaves as compiled (tc_call of
 * tests/e2e/progs/trap_compiled_lib.c). In warn mode the program goes
 * on and prints "continued". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

typedef int (*te_fn)(int);
int tc_call(void *p);

static void te_tick(int sig)
{
	(void)sig;
}

static long te_other(const char *s)
{
	return s != NULL;
}

static int te_call(te_fn f, int x)
{
	return f(x);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval on = { { 0, 20000 }, { 0, 20000 } }, off = { 0 };
	static char fill[4096];
	te_fn volatile f = (te_fn)(void *)te_other;

	int fl = fcntl(STDERR_FILENO, F_GETFL);

	if (argc != 2 || fl < 0 || fcntl(STDERR_FILENO, F_SETPIPE_SZ, 4096) < 0)
		return 2;
	/* Full to the last byte: pages first, then single bytes until the
	 * pipe refuses one. */
	memset(fill, '.', sizeof(fill));
	fcntl(STDERR_FILENO, F_SETFL, fl | O_NONBLOCK);
	while (write(STDERR_FILENO, fill, sizeof(fill)) > 0)
		;
	while (write(STDERR_FILENO, fill, 1) > 0)
		;
	fcntl(STDERR_FILENO, F_SETFL, fl);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = te_tick;	/* no SA_RESTART: a blocked write returns */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &on, NULL);
	if (!strcmp(argv[1], "own"))
		te_call(f, 1);
	else
		tc_call((void *)te_other);
	setitimer(ITIMER_REAL, &off, NULL);
	puts("continued");
	return 0;
}
