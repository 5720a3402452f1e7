#!/usr/bin/env bash
# SIGILL interposition by libfineibt.so (src/interpose/signals.c): a shared library that
# probes a CPU feature the classic way (sigaction/signal(SIGILL) + an
# instruction that may #UD + siglongjmp) keeps working, while the kernel
# keeps fineibt's handler; oldact reports the program's handlers, not
# fineibt's; and an unhandled non-CFI SIGILL still kills with status 132
# and no fineibt report. Run with libfineibt.so linked (DT_NEEDED before
# libc) and preloaded; without it as the baseline the checks are judged
# against.
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
CC=clang-22
out=$BUILD/e2e/trap
so=$PWD/$BUILD/libfineibt.so
mkdir -p "$out"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

[ -f "$so" ] || { fail trap_interpose_lib "$so missing (run make)"; exit 1; }

cat >"$out/probe.c" <<'EOF'
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static sigjmp_buf env;
static void on_ill(int sig, siginfo_t *si, void *uc) { siglongjmp(env, 1); }
static void on_ill_plain(int sig) { siglongjmp(env, 1); }

static void *kernel_handler(void)
{
	struct { void *h; unsigned long f; void *r; uint64_t m; } k;
	syscall(SYS_rt_sigaction, SIGILL, NULL, &k, 8);
	return k.h;
}

/* What a library probing for an instruction does. */
void probe(void)
{
	struct sigaction sa = { .sa_sigaction = on_ill, .sa_flags = SA_SIGINFO }, old;
	int caught = 0;
	void *kh;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old);
	kh = kernel_handler();
	if (!sigsetjmp(env, 1))
		__builtin_trap();
	else
		caught++;
	sigaction(SIGILL, &old, &sa);
	printf("old=%s kernel=%s back=%s\n",
	       old.sa_handler == SIG_DFL ? "dfl" : "other",
	       kh == (void *)on_ill ? "program" : "fineibt",
	       sa.sa_sigaction == on_ill ? "program" : "other");
	if (signal(SIGILL, on_ill_plain) == SIG_DFL) {
		if (!sigsetjmp(env, 1))
			__builtin_trap();
		else
			caught++;
	}
	caught += signal(SIGILL, SIG_DFL) == on_ill_plain;
	printf("caught=%d\n", caught);
	fflush(stdout);
}
EOF
cat >"$out/main.c" <<'EOF'
#include <string.h>
void probe(void);
int main(int argc, char **argv)
{
	probe();
	if (argc > 1 && !strcmp(argv[1], "die"))
		__builtin_trap();
	return 0;
}
EOF

$CC -O1 -shared -fPIC -o "$out/libprobe.so" "$out/probe.c" || exit 1
$CC -O1 -o "$out/main_linked" "$out/main.c" -L"$BUILD" -lfineibt \
	-L"$out" -lprobe -Wl,-rpath,"$PWD/$BUILD:$PWD/$out" || exit 1
$CC -O1 -o "$out/main_plain" "$out/main.c" -L"$out" -lprobe \
	-Wl,-rpath,"$PWD/$out" || exit 1

want_fi=$'old=dfl kernel=fineibt back=program\ncaught=3'
want_no=$'old=dfl kernel=program back=program\ncaught=3'

run() {	# name want cmd...
	local name=$1 want=$2 got
	shift 2
	got=$("$@" 2>"$out/$name.err")
	if [ "$got" = "$want" ] && [ ! -s "$out/$name.err" ]; then
		pass "$name"
	else
		fail "$name" "stdout '$got' stderr '$(head -c 300 "$out/$name.err")'"
	fi
}

run trap_interpose_baseline "$want_no" "$out/main_plain"
run trap_interpose_linked "$want_fi" "$out/main_linked"
run trap_interpose_preload "$want_fi" env LD_PRELOAD="$so" "$out/main_plain"

# Not CFI, no handler left: dies of SIGILL (132), nothing from fineibt.
for v in linked plain; do
	pre=()
	[ $v = plain ] && pre=(env LD_PRELOAD="$so")
	(ulimit -c 0; "${pre[@]}" "$out/main_$v" die >/dev/null 2>"$out/die_$v.err") 2>/dev/null
	rc=$?
	if [ $rc = 132 ] && ! grep -q fineibt "$out/die_$v.err"; then
		pass "trap_interpose_unhandled_dies_$v"
	else
		fail "trap_interpose_unhandled_dies_$v" "status $rc, stderr $(head -c 300 "$out/die_$v.err")"
	fi
done

# libc's entries are what dlsym(RTLD_NEXT) finds from libfineibt.so, now
# looked up in the modules' hash tables (src/elf/livedyn.c) instead of by
# dlsym: a library after libfineibt.so in the lookup order that defines
# sysv_signal is what the runtime forwards a non-SIGILL sysv_signal to,
# as RTLD_NEXT finds it; the same with LD_DYNAMIC_WEAK (dlsym answers).
cat >"$out/wrapsig.c" <<'EOF2'
#define _GNU_SOURCE
#include <signal.h>
int wrapsig_calls;
sighandler_t sysv_signal(int sig, sighandler_t h)
{
	struct sigaction sa = { .sa_handler = h, .sa_flags = SA_RESETHAND | SA_NODEFER }, old;

	wrapsig_calls++;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, &old) ? SIG_ERR : old.sa_handler;
}
EOF2
cat >"$out/nextmain.c" <<'EOF2'
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
extern int wrapsig_calls;
static void on_usr1(int sig) { (void)sig; }
int main(void)
{
	sighandler_t prev = sysv_signal(SIGUSR1, on_usr1);

	printf("calls=%d prev=%s\n", wrapsig_calls, prev == SIG_DFL ? "dfl" : "other");
	return 0;
}
EOF2
$CC -O1 -shared -fPIC -o "$out/libwrapsig.so" "$out/wrapsig.c" || exit 1
$CC -O1 -o "$out/next_main" "$out/nextmain.c" -L"$BUILD" -lfineibt \
	-L"$out" -lwrapsig -Wl,--no-as-needed -Wl,-rpath,"$PWD/$BUILD:$PWD/$out" || exit 1
run trap_interpose_next_after_runtime 'calls=1 prev=dfl' "$out/next_main"
run trap_interpose_next_dynamic_weak 'calls=1 prev=dfl' env LD_DYNAMIC_WEAK=1 "$out/next_main"
