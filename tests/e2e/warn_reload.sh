#!/usr/bin/env bash
# warn_reload: under cfi=warn a failure is counted as a repeat only of a
# failure of the same code (docs/traps.md, "Repeated failures"). Two
# libraries built from one source (warn_reload_lib.c, the target named
# a_target in one and b_target in the other) are dlopen'ed, their
# confused call made twice and dlclose'd, one after the other, A B A: the
# loader puts each at the same address, so each failure has the (call
# site, target) addresses of the one before. Each load's first failure is
# reported in full, naming its own target; its second is counted. Before,
# the repeat table (keyed by address) kept the pair of the unloaded
# library, and B's failure, and A's again, were never reported.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/warn_reload
mkdir -p "$D"
rt_build "$D/libwarn_reload_a.so" -O2 -g -fPIC -shared "$RT_SRC/warn_reload_lib.c" &&
rt_build "$D/libwarn_reload_b.so" -O2 -g -fPIC -shared -DWR_B "$RT_SRC/warn_reload_lib.c" &&
rt_build "$D/warn_reload" -O2 -g "$RT_SRC/warn_reload.c" -ldl ||
	{ rt_fail build "fineibt-cc could not build warn_reload"; exit 1; }
A=$D/libwarn_reload_a.so
B=$D/libwarn_reload_b.so

check() { if [ "$2" = 0 ]; then rt_pass "$1"; else rt_fail "$1" "$3"; fi; }
# The targets of the full reports, in order.
targets() { sed -nE 's/^fineibt: CFI failure at .*\(target: ([ab]_target)\+0x0; expected type: .*/\1/p' <<<"$RT_ERR_TXT" | tr '\n' ' '; }

for m in $(fi_with_sets kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi); do
	rt_run warn_reload "$m,warn" "$D/warn_reload" "$A" "$B" "$A"
	want="warn_reload ok 6"
	where=$(grep '^at ' <<<"$RT_OUT_TXT" | sort -u | wc -l)
	if [ "$RT_RC" = 0 ] && [ "$where" != 1 ]; then
		echo "SKIP: warn_reload[$m]: the loader put the libraries at different addresses"
		continue
	fi
	check "reload-reported[$m]" $([ "$RT_RC" = 0 ] && [ "$(tail -n 1 <<<"$RT_OUT_TXT")" = "$want" ] &&
		[ "$(targets)" = "a_target b_target a_target " ]; echo $?) \
		"rc=$RT_RC out=$(tr '\n' ' ' <<<"$RT_OUT_TXT") targets=$(targets) err=$(head -c 600 <<<"$RT_ERR_TXT")"
done
exit 0
