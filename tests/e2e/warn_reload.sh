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
# 70 loads, more than the table's 64 pairs: a retired pair's slot is
# taken again, one full report per load.
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
# ---- more loads than the table holds (64): each unload retires its
# pair, and once the table is full a retired slot is taken again, so every
# load still has one full report and its second failure counted. Without
# the reuse the table filled with retired pairs and loads past the 64th
# reported both failures in full.
many=()
for i in $(seq 70); do if [ $((i % 2)) = 1 ]; then many+=("$A"); else many+=("$B"); fi; done
for m in kcfi fineibt,paranoid,seq=v6.18; do
	rt_run warn_reload_many "$m,warn" "$D/warn_reload" "${many[@]}"
	where=$(grep '^at ' <<<"$RT_OUT_TXT" | sort -u | wc -l)
	if [ "$RT_RC" = 0 ] && [ "$where" != 1 ]; then
		echo "SKIP: warn_reload-many[$m]: the loader put the libraries at different addresses"
		continue
	fi
	nfull=$(grep -cE '^fineibt: CFI failure at .*; expected type: .*; mode: [^)]*\)$' <<<"$RT_ERR_TXT")
	check "reload-many-table-reused[$m]" $([ "$RT_RC" = 0 ] &&
		[ "$(tail -n 1 <<<"$RT_OUT_TXT")" = "warn_reload ok 140" ] && [ "$nfull" = 70 ]; echo $?) \
		"rc=$RT_RC full=$nfull err=$(head -c 300 <<<"$RT_ERR_TXT")"
done
exit 0
