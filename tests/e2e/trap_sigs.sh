#!/usr/bin/env bash
# trap_sigs (docs/traps.md): CFI traps are never swallowed nor resumed.
# - race: a second thread rewrites every saved ip of a fatal trap on the
#   alternate signal stack while the handler runs (it used to resume at
#   escaped(): the handler returned through the writable frame); the
#   process must die of SIGILL (132) without resuming, in every mode
#   with a fatal trap, 5 runs each (the old handler escaped in ~1 of 5).
# - sig ENTRY: a SIGILL handler installed through each libc entry point
#   that can install one (signal from strict C11 = __sysv_signal, ssignal,
#   sigset incl. SIG_HOLD, __sigaction, bsd_signal, sysv_signal, sigaction,
#   sigvec, sigignore, dlsym(RTLD_NEXT/RTLD_DEFAULT, "sigaction"), an
#   uninstrumented plug-in loaded with RTLD_DEEPBIND, and ones calling
#   sigset, or the compat sigvec@GLIBC_2.2.5, built with -z now, whose
#   slot is in RELRO, rebound only while it holds libc's function as
#   resolved at start-up (sigvec: by its version): a confused call is
#   still reported and fatal; a plain ud2 still reaches the handler.
# - fake: a SIGILL queued to ourselves with a forged si_code > 0 neither
#   changes the disposition (next CFI trap reported and fatal) nor, with
#   no program handler, lets the process run on (it used to reset SIGILL
#   to SIG_DFL and return: the next trap died without a report).
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
	clang-22 -O1 -shared -fPIC "$S/trap_sigs_plugin.c" -o "$O/plugin.so" &&
	clang-22 -O1 -shared -fPIC -DSIGS_SIGSET -Wl,-z,relro,-z,now \
		"$S/trap_sigs_plugin.c" -o "$O/plugin_sigset.so" &&
	clang-22 -O1 -shared -fPIC -DSIGS_SIGVEC -Wl,-z,relro,-z,now \
		"$S/trap_sigs_plugin.c" -o "$O/plugin_sigvec.so"
}
build >"$O/build.log" 2>&1 || { rt_fail build "$(tail -5 "$O/build.log")"; exit 1; }
export SIGS_PLUGIN=$O/plugin.so SIGS_PLUGIN_SIGSET=$O/plugin_sigset.so \
	SIGS_PLUGIN_SIGVEC=$O/plugin_sigvec.so

REPORT='^fineibt: CFI failure at [^ ]+ \(target: '

# ---- race: no return through the signal frame
for m in $(fi_with_sets kcfi fineibt fineibt,paranoid fineibt,bhi auto); do
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

# ---- sig ENTRY: each entry point that installs a SIGILL disposition
ENTRIES=(signal_c11 ssignal sigset sigset_hold __sigaction bsd_signal
	 sysv_signal __sysv_signal sigaction sigaction_info sigvec sigignore
	 next_sigaction default_sigaction deepbind deepbind_sigset deepbind_sigvec)
# sigignore: a CFI trap still reported; a plain ud2 meets SIG_IGN, which a
# fault cannot have (the kernel forces the default): dies, no handler.
for prog in prog prog_static; do
	for e in "${ENTRIES[@]}"; do
		for m in $(fi_with_sets kcfi auto fineibt,bhi); do
			tag="sig[$e,$m${prog#prog}]"
			(ulimit -c 0; rt_run "sig-$prog-$e-$m" "$m" "$O/$prog" sig "$e"
			 if [ "$RT_RC" = 132 ] && [ "$RT_OUT_TXT" = installed ] &&
			    [[ $RT_ERR_TXT =~ $REPORT ]] && [[ $RT_ERR_TXT != *",warn"* ]]; then
				rt_pass "$tag: CFI trap reported and fatal"
			 else
				rt_fail "$tag" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:200}'"
			 fi)
		done
		want_rc=3 want_out=$'installed\nhandler'
		[ "$e" = sigignore ] && want_rc=132 want_out=installed
		(ulimit -c 0; rt_run "ill-$prog-$e" auto "$O/$prog" sig "$e" ill
		 if [ "$RT_RC" = "$want_rc" ] && [ "$RT_OUT_TXT" = "$want_out" ] &&
		    [ -z "$RT_ERR_TXT" ]; then
			rt_pass "ill[$e${prog#prog}]: a plain ud2 goes to the program"
		 else
			rt_fail "ill[$e${prog#prog}]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:200}'"
		 fi)
	done
done

# ---- fake: a self-queued SIGILL with a forged si_code (ILL_ILLOPN)
for m in $(fi_with_sets kcfi auto fineibt,bhi); do
	(ulimit -c 0; rt_run "fake-$m" "$m" "$O/prog" fake
	 if [ "$RT_RC" = 132 ] && [ "$RT_OUT_TXT" = "after fake" ] &&
	    [[ $RT_ERR_TXT =~ $REPORT ]]; then
		rt_pass "fake[$m]: handler ran, the next CFI trap still reported and fatal"
	 else
		rt_fail "fake[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:200}'"
	 fi)
	(ulimit -c 0; rt_run "fake-nohandler-$m" "$m" "$O/prog" fake nohandler
	 if [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "fake-nohandler[$m]: dies of it as without fineibt"
	 else
		rt_fail "fake-nohandler[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:200}'"
	 fi)
done
