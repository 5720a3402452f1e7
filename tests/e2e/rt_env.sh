#!/usr/bin/env bash
# rt_env: the runtime reads its FINEIBT_* variables at start-up as getenv
# does (the first entry of a name wins; an entry without '=' is no value;
# other names that start alike are other variables), whether the start
# finds them in its one walk of the environment or, with more than it
# keeps (16), walks again for each (src/load/rtlibc.c, fi_env_startup).
# The mode the runtime reports (FINEIBT_VERBOSE) says which value it read.
. "$(dirname "$0")/progs/rt_lib.bash"
unset FINEIBT_CFI FINEIBT_VERBOSE

P=$RT_OUT/rt_env
X=$RT_OUT/rt_env_exec
rt_build "$P" -O2 "$RT_SRC/rt_errno.c" ||
	{ rt_fail build "fineibt-cc could not build rt_env"; exit 1; }
cc -O2 -o "$X" "$RT_SRC/rt_env_exec.c" ||
	{ rt_fail build "cc could not build rt_env_exec"; exit 1; }

# check NAME WANT ENTRY...: the runtime reports its module WANT (kept
# kcfi,norand, or rewritten to off).
check() {
	local name=$1 want=$2 err
	shift 2
	# No shared text cache: a hit would say "mapped from the cache".
	err=$("$X" "$P" FINEIBT_CACHE=off "$@" 2>&1 >/dev/null)
	if grep -q "^fineibt: $P: $want" <<<"$err"; then
		rt_pass "$name"
	else
		rt_fail "$name" "want '$want': $(grep "$P" <<<"$err" | head -n 2)"
	fi
}

many=()
for i in $(seq 1 20); do many+=("FINEIBT_ZZ$i=1"); done
for set in few many; do
	if [ "$set" = many ]; then pre=("${many[@]}"); else pre=(); fi
	check "first of two wins ($set)" "kept kcfi,norand" "${pre[@]}" \
		FINEIBT_VERBOSE=1 FINEIBT_CFI=kcfi,norand FINEIBT_CFI=off
	check "first of two wins, other order ($set)" "rewritten to off" \
		"${pre[@]}" FINEIBT_VERBOSE=1 FINEIBT_CFI=off FINEIBT_CFI=kcfi,norand
	check "an entry without '=' is no value ($set)" "kept kcfi,norand" \
		"${pre[@]}" FINEIBT_VERBOSE=1 FINEIBT_CFI FINEIBT_CFIX=off \
		FINEIBT_CFI=kcfi,norand
	check "a longer name is another variable ($set)" "kept kcfi,norand" \
		"${pre[@]}" FINEIBT_VERBOSE=1 FINEIBT_CFI_=off FINEIBT_CF=off \
		FINEIBT_CFI=kcfi,norand
done
