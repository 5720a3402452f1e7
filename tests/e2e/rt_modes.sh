#!/usr/bin/env bash
# rt_modes: a program built with fineibt-cc, run in every cfi= mode (the
# seven of docs/runtime.md, each with and without norand): legal calls of
# arity 0..8 and tail calls; type-confused calls (callee arity 1 and 2,
# call and tail-jmp sites) caught with the report and status 132, or
# reported once and survived with warn; the naked-ENDBR pivot; the program's
# own SIGILL handler; per-process hash randomisation (seen with debug;
# reports name the compile-time hash otherwise). All of it with the
# v4 and the v6.18 sequence sets.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/rt_calls
rt_build "$P" -O2 -Wall "$RT_SRC/rt_calls.c" "$RT_SRC/rt_naked.S" ||
	{ rt_fail build "fineibt-cc could not build rt_calls"; exit 1; }

check_legal() {
	local m=$1
	rt_run legal "$m" "$P" legal
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "legal ok" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "legal[$m]"
	else
		rt_fail "legal[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
}

# confused CASE callee: caught (132 + report) unless off; survived with warn.
check_confuse() {
	local m=$1 c=$2 callee=a${2: -1}
	local re="$RT_REPORT_RE$callee\\+0x0; expected type: 0x[0-9a-f]{8}; mode: $(rt_report_mode "$m")\\)"
	rt_run "confuse-$c" "$m" "$P" confuse "$c"
	if rt_is_off "$m"; then
		if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "survived $c" ] && [ -z "$RT_ERR_TXT" ]; then
			rt_pass "confuse-$c[$m]: not checked"
		else
			rt_fail "confuse-$c[$m]" "off should not check: rc=$RT_RC err='$RT_ERR_TXT'"
		fi
		return
	fi
	if [ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] && grep -Eq "$re" <<<"$RT_ERR_TXT"; then
		rt_pass "confuse-$c[$m]: caught"
	else
		rt_fail "confuse-$c[$m]" "want 132 + report /$re/: rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	rt_run "warn-$c" "$m,warn" "$P" confuse "$c"
	# One violation, one report: in paranoid modes the callee's preamble
	# check must not report the call the caller already reported.
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "survived $c" ] &&
	   grep -Eq "${re%mode: *}mode: $(rt_report_mode "$m,warn")\\)" <<<"$RT_ERR_TXT" &&
	   [ "$(grep -c 'CFI failure' <<<"$RT_ERR_TXT")" = 1 ]; then
		rt_pass "warn-$c[$m]: reported once, continued"
	else
		rt_fail "warn-$c[$m]" "want report + survival: rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
}

# The pivot: a pointer to an ENDBR with no hash check in front of it,
# biased by 16 where callers are FineIBT ones (their lea -16 undoes it).
check_naked() {
	local m=$1 bias=0
	rt_is_fineibt "$m" && bias=16
	rt_run naked "$m" "$P" naked "$bias"
	if rt_checks_caller "$m"; then
		if [ "$RT_RC" = 132 ] && grep -Eq "$RT_REPORT_RE" <<<"$RT_ERR_TXT"; then
			rt_pass "naked-endbr[$m]: caught"
		else
			rt_fail "naked-endbr[$m]" "want caught: rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
	elif [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "naked returned 42" ]; then
		rt_pass "naked-endbr[$m]: not caught (as in the kernel)"
	else
		rt_fail "naked-endbr[$m]" "want the pivot to go through: rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
}

check_sigill() {
	local m=$1
	rt_run sigill "$m" "$P" sigill
	if rt_is_off "$m"; then
		[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = $'own handler\nsurvived call1' ] &&
			{ rt_pass "own-sigill[$m]"; return; }
	elif [ "$RT_RC" = 132 ] && [ "$RT_OUT_TXT" = "own handler" ] &&
	     grep -Eq "${RT_REPORT_RE}a1\\+0x0" <<<"$RT_ERR_TXT"; then
		rt_pass "own-sigill[$m]: own handler ran, CFI trap not swallowed"
		return
	fi
	rt_fail "own-sigill[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
}

# Two runs with debug: the run-time hash differs with rand (a key per
# process) and not with norand, where it is the compile-time hash; the
# compile-time hash the report names is the same in both runs (what
# failures are grouped by). Without debug no run-time hash is printed.
check_rand() {
	local m=$1 c1 c2 r1 r2 re='expected type: (0x[0-9a-f]{8})( \(run-time (0x[0-9a-f]{8})\))?;'
	rt_is_off "$m" && return
	rt_run rand1 "$m,debug" "$P" confuse call1
	[[ $RT_ERR_TXT =~ $re ]] && c1=${BASH_REMATCH[1]} r1=${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}
	rt_run rand2 "$m,debug" "$P" confuse call1
	[[ $RT_ERR_TXT =~ $re ]] && c2=${BASH_REMATCH[1]} r2=${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}
	rt_run rand3 "$m" "$P" confuse call1
	if [ -z "${c1:-}" ] || [ -z "${c2:-}" ]; then
		rt_fail "key[$m]" "no report"
	elif [ "$c1" != "$c2" ] || grep -q 'run-time' <<<"$RT_ERR_TXT" ||
	     ! grep -q "expected type: $c1; " <<<"$RT_ERR_TXT"; then
		rt_fail "key[$m]" "compile-time hash '$c1' vs '$c2', or a run-time hash without debug: $RT_ERR_TXT"
	elif [[ $m == *norand* ]] && [ "$r1" = "$r2" ] && [ "$r1" = "$c1" ]; then
		rt_pass "key[$m]: same hash in every process, the compiler's"
	elif [[ $m != *norand* ]] && [ "$r1" != "$r2" ] && [ "$r1" != "$c1" ]; then
		rt_pass "key[$m]: run-time hash differs per process, compile-time hash the same"
	else
		rt_fail "key[$m]" "run-time '$r1' vs '$r2', compile-time '$c1'"
	fi
}

# Every mode with both sequence sets (RT_MODES: ",seq=v6.18" variants,
# docs/sequences.md).
for m in "${RT_MODES[@]}"; do
	check_legal "$m"
	for c in call1 call2 jmp1 jmp2; do
		check_confuse "$m" "$c"
	done
	check_naked "$m"
	check_sigill "$m"
	check_rand "$m"
done
