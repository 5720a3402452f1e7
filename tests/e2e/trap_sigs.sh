#!/usr/bin/env bash
# trap_sigs (issue 18): CFI traps are never swallowed nor resumed.
# - race: a second thread rewrites every saved ip of a fatal trap on the
#   alternate signal stack while the handler runs (it used to resume at
#   escaped(): the handler returned through the writable frame); the
#   process must die of SIGILL (132) without resuming, in every mode
#   with a fatal trap, 5 runs each (the old handler escaped in ~1 of 5).
# - sig ENTRY: a SIGILL handler installed through each libc entry point
#   that can install one (signal from strict C11 = __sysv_signal, ssignal,
#   sigset incl. SIG_HOLD, __sigaction, bsd_signal, sysv_signal, sigaction,
#   sigvec, sigignore, dlsym(RTLD_NEXT/RTLD_DEFAULT, "sigaction"), an
#   uninstrumented plug-in loaded with RTLD_DEEPBIND): a confused call is
#   still reported and fatal; a plain ud2 still reaches the handler.
. "$(dirname "$0")/progs/rt_lib.bash"
O=$RT_OUT/sigs
mkdir -p "$O"
S=$RT_SRC

if [ -n "${FINEIBT_SAN:-}" ]; then
	echo "SKIP: trap_sigs: runs the runtime inside a program (not under SAN=1)"
	exit 0
fi
build() {
	"$FCC" -O2 -std=c11 -c "$S/trap_sigs_c11.c" -o "$O/c11.o" &&
	"$FCC" -O2 "$S/trap_sigs.c" "$O/c11.o" -o "$O/prog" -lpthread -ldl &&
	"$FCC" -O2 -static-fineibt "$S/trap_sigs.c" "$O/c11.o" -o "$O/prog_static" -lpthread -ldl &&
	clang-22 -O1 -shared -fPIC "$S/trap_sigs_plugin.c" -o "$O/plugin.so"
}
build >"$O/build.log" 2>&1 || { rt_fail build "$(tail -5 "$O/build.log")"; exit 1; }
export SIGS_PLUGIN=$O/plugin.so

REPORT='^fineibt: CFI failure at [^ ]+ \(target: '

# ---- race: no return through the signal frame
for m in kcfi fineibt fineibt,paranoid fineibt,bhi auto; do
	for i in 1 2 3 4 5; do
		(ulimit -c 0; rt_run "race-$m-$i" "$m" "$O/prog" race
		 # A rewrite that lands before the handler reads the frame
		 # hides the trap (no report), but the process still dies.
		 if [ "$RT_RC" = 132 ] && [ "$RT_OUT_TXT" = calling ] &&
		    { [ -z "$RT_ERR_TXT" ] || [[ $RT_ERR_TXT =~ $REPORT ]]; }; then
			rt_pass "race[$m#$i]: died of SIGILL, not resumed"
		 else
			rt_fail "race[$m#$i]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:200}'"
		 fi)
	done
done
