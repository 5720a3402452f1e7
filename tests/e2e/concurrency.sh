#!/usr/bin/env bash
# concurrency: the runtime under threads, dlopen/dlclose, fork and exec
# (docs/robustness.md). Programs: tests/e2e/progs/conc_*.c, built with
# fineibt-cc.
#  - conc_dl: dlopen/dlclose of a kCFI library in a loop while 4 threads
#    call through rewritten code; with a confused call per round in warn
#    (all continue; reported once per load address of the library, the
#    same pair again is counted: docs/traps.md "Repeated failures") and
#    fatal (dies at the first) modes.
#  - conc_trap: 8 threads hit the same CFI trap at once: warn reports it
#    once (one pair; the other 7 are counted) and all continue; fatal
#    dies once with status 132.
#  - conc_fork: forked children inherit the rewritten text and the
#    handler; an exec'd child rewrites itself again with a new key.
. "$(dirname "$0")/progs/rt_lib.bash"
# Reports per failure under warn: one in every mode. Paranoid modes check
# at the caller and at the callee, but the handler resumes the caller so the
# callee's check passes (the kernel would print both; docs/traps.md).
per_fail() { echo 1; }
D=$RT_OUT/conc
mkdir -p "$D"
{ rt_build "$D/libconc.so" -O2 -fPIC -shared "$RT_SRC/conc_lib.c" &&
  rt_build "$D/conc_dl" -O2 -pthread "$RT_SRC/conc_dl.c" -ldl &&
  rt_build "$D/conc_trap" -O2 -pthread "$RT_SRC/conc_trap.c" &&
  rt_build "$D/conc_fork" -O2 -I"$ROOT/include" "$RT_SRC/conc_fork.c"; } ||
	{ rt_fail build "fineibt-cc could not build the conc_ programs"; exit 1; }
check() { if [ "$2" = 0 ]; then rt_pass "$1"; else rt_fail "$1" "$3"; fi; }
nreports() { grep -cE "$RT_REPORT_RE" <<<"$RT_ERR_TXT"; }

for m in $(fi_with_sets off kcfi fineibt fineibt,paranoid fineibt,paranoid,bhi auto) auto,norand; do
	rt_run conc_dl "$m" "$D/conc_dl" "$D/libconc.so" 30
	check "dlopen-loop[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "conc_dl ok 30 0" ] &&
		[ "$(nreports)" = 0 ]; echo $?) "rc=$RT_RC out=$RT_OUT_TXT err=$(head -c 300 <<<"$RT_ERR_TXT")"
	rt_is_off "$m" && continue
	rt_run conc_dl_warn "$m,warn" "$D/conc_dl" "$D/libconc.so" 30 bad
	# A round's library may load where an earlier one did: the same
	# pair, counted. Full reports: 1..30; every line a warn report or
	# a count (at 10 repeats of one address).
	nfull=$(grep -cE "$RT_REPORT_RE.*mode: [^)]*,warn[,)]" <<<"$RT_ERR_TXT")
	check "dlopen-loop-warn[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "conc_dl ok 30 30" ] &&
		[ "$nfull" -ge 1 ] && [ "$nfull" -le $((30 * $(per_fail "$m"))) ] &&
		! grep -vE "$RT_REPORT_RE.*mode: [^)]*,warn[,)]" <<<"$RT_ERR_TXT" |
		grep -qvE "$RT_REPORT_RE.*\) repeated [0-9]+ times$"; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT reports=$nfull err=$(head -c 300 <<<"$RT_ERR_TXT")"
	rt_run conc_dl_fatal "$m" "$D/conc_dl" "$D/libconc.so" 30 bad
	check "dlopen-loop-fatal[$m]" $([ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] && [ "$(nreports)" = 1 ] &&
		grep -qE "$RT_REPORT_RE"'conc_lib_bad|0x' <<<"$RT_ERR_TXT"; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
done

for m in $(fi_with_sets kcfi fineibt fineibt,paranoid fineibt,bhi auto); do
	rt_run conc_trap "$m,warn" "$D/conc_trap" 8
	# One pair: reported once, the other 7 counted (no line below 10).
	check "trap-8-threads-warn[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "conc_trap survived 8" ] &&
		[ "$(nreports)" = "$(per_fail "$m")" ] && [ "$(wc -l <<<"$RT_ERR_TXT")" = "$(per_fail "$m")" ]; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT reports=$(nreports) err=$(head -c 300 <<<"$RT_ERR_TXT")"
	rt_run conc_trap "$m" "$D/conc_trap" 8
	# Threads that trapped before the first one re-executed its #UD with
	# SIG_DFL may each have printed their line: whole lines only, 1..8.
	n=$(nreports)
	check "trap-8-threads-fatal[$m]" $([ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] && [ "$n" -ge 1 ] && [ "$n" -le 8 ] &&
		[ "$(grep -cvE "$RT_REPORT_RE" <<<"$RT_ERR_TXT")" = 0 ]; echo $?) "rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
done

for m in $(fi_with_sets kcfi fineibt,paranoid auto,warn); do
	rt_run conc_fork "$m" "$D/conc_fork" fork
	want="fork legal=4 bad=sigill" nrep=1
	[[ ,$m, == *,warn,* ]] && want="fork legal=4 bad=exit 0" nrep=$(per_fail "$m")
	check "fork-inherits[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$want" ] && [ "$(nreports)" = "$nrep" ]; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
done
for m in $(fi_with_sets auto fineibt kcfi auto,norand); do
	rt_run conc_exec "$m" "$D/conc_fork" exec
	read -r w a b <<<"$RT_OUT_TXT"
	ok=1
	if [ "$RT_RC" = 0 ] && [ "$w" = exec ] && [ -n "$b" ] && [ "$a" != 00000000 ]; then
		# A random key per process: the two hashes differ (2^-32 chance
		# of a false failure); norand: both are the compiler's.
		if [[ ,$m, == *,norand,* ]]; then [ "$a" = "$b" ] && ok=0; else [ "$a" != "$b" ] && ok=0; fi
	fi
	check "exec-rehash[$m]" "$ok" "rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
done
