#!/usr/bin/env bash
# The runtime runs inside the program before main and inside dlopen: it must
# leave errno as C promises it at main (zero) in every mode. Found by
# bzip2recover, which reads errno without setting it (docs/real-programs.md).
. "$(dirname "$0")/progs/rt_lib.bash"
rt_build "$RT_OUT/rt_errno" -O2 "$RT_SRC/rt_errno.c" || { rt_fail "rt_errno build" "fineibt-cc failed"; exit 1; }
for m in "${RT_MODES[@]}"; do
	rt_run "errno-$m" "$m" "$RT_OUT/rt_errno"
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "errno=0" ]; then
		rt_pass "errno is 0 at main ($m)"
	else
		rt_fail "errno is 0 at main ($m)" "rc=$RT_RC out=$RT_OUT_TXT"
	fi
done
