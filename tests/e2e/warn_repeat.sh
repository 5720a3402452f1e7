#!/usr/bin/env bash
# warn_repeat: under cfi=warn a failure of a (call site, target) pair seen
# before is counted, not reported in full again (docs/traps.md, "Repeated
# failures"; src/trap/repeat.c). In every checking mode and both sets:
#  - one pair 10,000 times: one full report, then one "repeated N times"
#    line at 10, 100, 1,000 and 10,000 only, on stderr and as FINEIBT_LOG
#    records (and in the system log, one mode);
#  - two pairs (two sites, one target): each reported in full;
#  - two tail calls of other types to one target from one call site
#    (tails): each reported in full (before, in fineibt and fineibt,bhi,
#    where the target's check keys them by one return address, the
#    second was counted as the first's repeat, never reported);
#  - 81 pairs, more than the table holds (64): every pair reported in
#    full, those past the table's room every time;
#  - 4 threads x 1,000 x two pairs at once: one full report per pair, the
#    lines at 10, 100 and 1,000 once per pair;
#  - fatal: dies at the first failure with its report, as before;
#  - the coarse check's stops (compat_coarse), at a call and a tail jump;
#  - a stock kCFI program (clang -fsanitize=kcfi) under `fineibt run`.
# Before, every failure was reported in full (10,000 reports).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/warn_repeat
mkdir -p "$D"
rt_build "$D/warn_repeat" -O2 -g -pthread "$RT_SRC/warn_repeat.c" ||
	{ rt_fail build "fineibt-cc could not build warn_repeat"; exit 1; }
P=$D/warn_repeat

check() { if [ "$2" = 0 ]; then rt_pass "$1"; else rt_fail "$1" "$3"; fi; }
# Full reports: the first line, with its type and mode.
nfull() { grep -cE "$RT_REPORT_RE.*; expected type: .*; mode: [^)]*\)$" <<<"$RT_ERR_TXT"; }
# The counts of the "repeated" lines, one per line, in order.
repeats() { sed -nE 's/^fineibt: CFI failure at .* repeated ([0-9]+) times$/\1/p' <<<"$RT_ERR_TXT"; }
# Every line of stderr is a report's line.
clean() { [ "$(grep -cvE '^fineibt: CFI failure at |^fineibt:   ' <<<"$RT_ERR_TXT")" = 0 ]; }
head_of() { head -c 400 <<<"$RT_ERR_TXT"; }

for m in $(fi_with_sets kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi); do
	w=$m,warn
	# ---- one pair, 10,000 times (and its FINEIBT_LOG records)
	rm -f "$D/log.json"
	FINEIBT_LOG=$D/log.json rt_run warn_repeat_one "$w" "$P" one 10000
	first=$(grep -E "$RT_REPORT_RE" <<<"$RT_ERR_TXT" | head -n 1 | sed 's/; expected type: .*//')
	same=$(grep -cF "$first" <<<"$RT_ERR_TXT")
	check "one-pair[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "warn_repeat ok 10000" ] &&
		[ "$(nfull)" = 1 ] && [ "$(repeats | tr '\n' ' ')" = "10 100 1000 10000 " ] &&
		[ "$same" = 5 ] && clean; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT full=$(nfull) repeats=$(repeats | tr '\n' ' ') same=$same err=$(head_of)"
	check "one-pair-log[$m]" $(python3 - "$D/log.json" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
full = [r for r in recs if "repeated" not in r]
rep = [r for r in recs if "repeated" in r]
ok = (len(full) == 1 and full[0]["action"] == "warn" and
      [r["repeated"] for r in rep] == [10, 100, 1000, 10000] and
      all(r["action"] == "warn" and r["target"] == full[0]["target"] and
          r["at"] == full[0]["at"] and r["kind"] == full[0]["kind"] for r in rep))
print(0 if ok else 1)
PY
) "log: $(head -c 600 "$D/log.json")"

	# ---- two pairs: two sites, one target
	rt_run warn_repeat_two "$w" "$P" two 100
	check "two-pairs[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "warn_repeat ok 200" ] &&
		[ "$(nfull)" = 2 ] && [ "$(repeats | sort -n | tr '\n' ' ')" = "10 10 100 100 " ] && clean; echo $?) \
		"rc=$RT_RC full=$(nfull) repeats=$(repeats | tr '\n' ' ') err=$(head_of)"

	# ---- two tail calls of other types to one target, from one call
	# site: in the callee-checking modes the check (the target's) sees
	# one return address for both; each is reported in full
	rt_run warn_repeat_tails "$w" "$P" tails 100
	types=$(sed -nE 's/^fineibt: CFI failure at .*; expected type: (0x[0-9a-f]+); mode: .*/\1/p' <<<"$RT_ERR_TXT" | sort -u | wc -l)
	check "tail-types[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "warn_repeat ok 200" ] &&
		[ "$(nfull)" = 2 ] && [ "$types" = 2 ] && [ "$(repeats | sort -n | tr '\n' ' ')" = "10 10 100 100 " ] && clean; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT full=$(nfull) types=$types repeats=$(repeats | tr '\n' ' ') err=$(head_of)"

	# ---- more pairs than the table holds: 81 targets, twice each
	rt_run warn_repeat_many "$w" "$P" many 81
	named=$(sed -nE 's/^fineibt: CFI failure at .*\(target: (t[0-9]+)\+0x0; expected type: .*/\1/p' <<<"$RT_ERR_TXT" | sort -u | wc -l)
	check "table-full-reports-in-full[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "warn_repeat ok 162" ] &&
		[ "$(nfull)" = $((64 + 2 * 17)) ] && [ "$named" = 81 ] && [ -z "$(repeats)" ] && clean; echo $?) \
		"rc=$RT_RC full=$(nfull) targets=$named repeats=$(repeats | tr '\n' ' ') err=$(head_of)"

	# ---- threads failing at once
	rt_run warn_repeat_threads "$w" "$P" threads 4 1000
	check "threads[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "warn_repeat ok 8000" ] &&
		[ "$(nfull)" = 2 ] && [ "$(repeats | sort -n | tr '\n' ' ')" = "10 10 100 100 1000 1000 " ] && clean; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT full=$(nfull) repeats=$(repeats | tr '\n' ' ') err=$(head_of)"

	# ---- fatal: the first failure ends it
	rt_run warn_repeat_fatal "$m" "$P" one 10000
	check "fatal-unchanged[$m]" $([ "$RT_RC" = 132 ] && [ -z "$RT_OUT_TXT" ] && [ "$(nfull)" = 1 ] &&
		[ -z "$(repeats)" ]; echo $?) "rc=$RT_RC full=$(nfull) err=$(head_of)"
done

# ---- the coarse check: a stop at a call, and at a tail jump (no site:
# counted by its caller's return address)
C=$RT_OUT/compat_coarse
rt_build "$C" -O2 -g -Wno-deprecated-non-prototype -I"$ROOT/include" \
	"$RT_SRC/compat_coarse.c" "$RT_SRC/compat_coarse_raw.S" ||
	{ rt_fail build "fineibt-cc could not build compat_coarse"; exit 1; }
for m in kcfi fineibt,paranoid,seq=v6.18; do
	for c in mid tail; do
		rt_run warn_repeat_coarse "$m,warn" "$C" "$c-repeat" 1000
		ncoarse=$(grep -c '; unchecked call site, coarse check; mode: ' <<<"$RT_ERR_TXT")
		check "coarse-$c[$m]" $([ "$RT_RC" = 0 ] && [ "$ncoarse" = 1 ] &&
			[ "$(repeats | tr '\n' ' ')" = "10 100 1000 " ] && clean; echo $?) \
			"rc=$RT_RC full=$ncoarse repeats=$(repeats | tr '\n' ' ') err=$(head_of)"
	done
done

# ---- a stock kCFI program (clang-22 -fsanitize=kcfi alone) under
# `fineibt run`: its checks are counted the same way
S=$D/stock
if clang-22 -O2 -g -fsanitize=kcfi -pthread "$RT_SRC/warn_repeat.c" -o "$S"; then
	for m in kcfi fineibt,paranoid; do
		rt_run warn_repeat_stock "$m,warn" "$ROOT/$BUILD/fineibt" run "$S" two 1000
		check "stock[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "warn_repeat ok 2000" ] &&
			[ "$(nfull)" = 2 ] && [ "$(repeats | sort -n | tr '\n' ' ')" = "10 10 100 100 1000 1000 " ] &&
			clean; echo $?) "rc=$RT_RC full=$(nfull) repeats=$(repeats | tr '\n' ' ') err=$(head_of)"
	done
else
	rt_fail stock-build "clang-22 -fsanitize=kcfi could not build warn_repeat"
fi

# ---- the system log: the same lines, one datagram each (one mode)
S=$D/syslog
rm -rf "$S"
mkdir -p "$S"
syslog_listen "$S"
FINEIBT_LOG=syslog:$S/log.sock rt_run warn_repeat_syslog kcfi,warn "$P" one 1000
wait "$lpid"
nfull_log=$(grep -cE '^<12>warn_repeat\[[0-9]+\]: fineibt: CFI failure at .*; mode: kcfi,warn\)$' "$S/got")
nrep_log=$(sed -nE 's/^<12>warn_repeat\[[0-9]+\]: fineibt: CFI failure at .* repeated ([0-9]+) times$/\1/p' "$S/got" | tr '\n' ' ')
check syslog-repeats $([ "$RT_RC" = 0 ] && [ "$nfull_log" = 1 ] && [ "$nrep_log" = "10 100 1000 " ]; echo $?) \
	"rc=$RT_RC full=$nfull_log repeats=$nrep_log got=$(head -c 600 "$S/got")"
rm -rf "$S"
exit 0
