#!/usr/bin/env bash
# rt_variadic: the userspace ABI check behind the v6.18 set's departure
# from the kernel (docs/sequences.md). Variadic functions taking doubles,
# called through pointers (call and tail-call sites), give the right
# results in every cfi= mode with both sequence sets; and the hazard the
# departure avoids is real: the same callee reached with %al = 0 (what a
# "sub $hash, %eax" check leaves behind) reads no double arguments.
. "$(dirname "$0")/progs/rt_lib.bash"

P=$RT_OUT/rt_variadic
rt_build "$P" -O2 -Wall "$RT_SRC/rt_variadic.c" "$RT_SRC/rt_variadic_al0.S" ||
	{ rt_fail build "fineibt-cc could not build rt_variadic"; exit 1; }

want=$'sum 10.9375\nmany 45.5000\nmixed 3.7500\ntail 8.1250'
# Every mode in both sets (RT_MODES has the ",seq=v6.18" variants).
for m in "${RT_MODES[@]}"; do
	rt_run variadic "$m" "$P" calls
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$want" ] && [ -z "$RT_ERR_TXT" ]; then
		rt_pass "variadic doubles through pointers[$m]"
	else
		rt_fail "variadic doubles through pointers[$m]" \
			"rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
done
for seq in v4 v6.18; do
	export FINEIBT_SEQ=$seq
	# The process really runs the set asked for (cfi=debug says which).
	rt_run "debug-$seq" "auto,debug" "$P" calls
	if [ "$RT_RC" = 0 ] && grep -q "^fineibt: cfi=debug: mode kcfi,debug.*; sequence set $seq;" <<<"$RT_ERR_TXT" &&
	   grep -q "rewritten to " <<<"$RT_ERR_TXT"; then
		rt_pass "cfi=debug reports sequence set $seq"
	else
		rt_fail "cfi=debug reports sequence set $seq" "rc=$RT_RC err='$RT_ERR_TXT'"
	fi
done
unset FINEIBT_SEQ

# The hazard: %al = 0 at a variadic call loses the double (scrubbed stack: 0).
rt_run al0 auto "$P" al0
if [ "$RT_RC" = 0 ] && [ -n "$RT_OUT_TXT" ] && [ "$RT_OUT_TXT" != "al0 12345.6875" ]; then
	rt_pass "al=0 at a variadic call loses its double ($RT_OUT_TXT): %eax must not carry the hash"
else
	rt_fail "al=0 hazard" "rc=$RT_RC out='$RT_OUT_TXT' (12345.6875 would mean the callee saved xmm0 anyway)"
fi

# A bad FINEIBT_SEQ is one message and the default set, never fatal.
FINEIBT_SEQ=$'v9\e[31m' rt_run badseq auto "$P" calls
if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$want" ] &&
   [ "$RT_ERR_TXT" = "fineibt: ignoring FINEIBT_SEQ='v9?[31m': unknown sequence set (v4, v6.18)" ]; then
	rt_pass "bad FINEIBT_SEQ: one sanitised message, v4"
else
	rt_fail "bad FINEIBT_SEQ" "rc=$RT_RC err='$RT_ERR_TXT'"
fi
