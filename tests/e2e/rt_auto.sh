#!/usr/bin/env bash
# rt_auto: auto follows the kernel's rule (seed 007, __apply_fineibt) in
# both branches. Without user IBT (Linux reports none: every process
# today) auto is kcfi, rehashed; with user IBT, reached only through the
# test hook FINEIBT_TEST_USER_IBT=1, it is fineibt,paranoid. Each branch is
# checked three ways: what the runtime says (FINEIBT_VERBOSE), what a
# type-confused call's report names, and what the live text holds
# (fineibt inspect --pid classifies the rewritten sites in memory). The
# hook is exact ("1" only), leaves explicit modes alone, and keeps norand
# and the sequence set.
. "$(dirname "$0")/progs/rt_lib.bash"
unset FINEIBT_TEST_USER_IBT

P=$RT_OUT/rt_auto
rt_build "$P" -O2 -Wall "$RT_SRC/rt_auto.c" ||
	{ rt_fail build "fineibt-cc could not build rt_auto"; exit 1; }

# live CFI HOOK: the mode fineibt inspect --pid reads from the live sites.
live() {
	local cfi=$1 hook=$2 line mode=""
	coproc RA { exec env FINEIBT_CFI="$cfi" ${hook:+FINEIBT_TEST_USER_IBT=$hook} "$P" wait 2>/dev/null; }
	if read -r -t 20 line <&"${RA[0]}" && [ "$line" = "ready 42" ]; then
		mode=$("$FIBT" inspect --pid "$RA_PID" --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
print([m["mode"] for m in j["modules"] if m["module"] == sys.argv[1]][0])' "$P" 2>/dev/null)
	fi
	echo go >&"${RA[1]}" 2>/dev/null
	wait "$RA_PID" 2>/dev/null
	echo "$mode"
}

# case NAME CFI HOOK WANT: all three views agree on WANT.
check() {
	local name=$1 cfi=$2 hook=$3 want=$4 said report got
	# What the runtime says it rewrote the program to, and the report.
	rt_run "$name" "$cfi" env ${hook:+FINEIBT_TEST_USER_IBT=$hook} \
		FINEIBT_VERBOSE=1 "$P" confuse
	said=$(sed -En "s|^fineibt: $P: (rewritten to\|kept) ([^ ]*).*|\\2|p" <<<"$RT_ERR_TXT")
	report=$(sed -n 's/.*; mode: \([^)]*\)).*/\1/p' <<<"$RT_ERR_TXT" | head -1)
	if [ "$RT_RC" = 132 ] && [ "$said" = "$want" ] && [ "$report" = "$want" ]; then
		rt_pass "auto[$name]: runtime and report say $want"
	else
		rt_fail "auto[$name]" "want $want: rc=$RT_RC said='$said' report='$report' err='$RT_ERR_TXT'"
	fi
	got=$(live "$cfi" "$hook")
	# The live view judges randomisation from the hashes: same words.
	if [ "$got" = "$want" ]; then
		rt_pass "auto[$name]: the live text is $want (inspect --pid)"
	else
		rt_fail "auto[$name]" "inspect --pid says '$got', want $want"
	fi
}

check no-ibt auto "" kcfi
check default "" "" kcfi
check ibt auto 1 fineibt,paranoid
check ibt-norand auto,norand 1 fineibt,paranoid,norand
check no-ibt-norand auto,norand "" kcfi,norand
check ibt-v618 auto,seq=v6.18 1 fineibt,paranoid,seq=v6.18
check no-ibt-v618 auto,seq=v6.18 "" kcfi,seq=v6.18
# The hook is "1" exactly; explicit modes ignore it.
check hook-0 auto 0 kcfi
check hook-yes auto yes kcfi
check ibt-kcfi kcfi 1 kcfi
check ibt-fineibt fineibt 1 fineibt
