#!/usr/bin/env bash
# bench_real: bench/real.py's table (make bench-real) from saved results,
# without building or timing anything: instruction ratios per variant and
# mode, the wall-time ratio as the median of per-round ratios with its
# spread, missing peers shown as "-", the csv, and --readme rewriting only
# the text between the markers (a file without them is left alone, exit 1).
set -u
cd "${FINEIBT_ROOT:-$(dirname "$0")/../..}" || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/bench"
ok() { if "$@"; then echo "PASS: $N"; else echo "FAIL: $N: ${WHY:-check failed}"; fi; }
# okc 'A && B': every part of a compound condition counts.
okc() { if eval "$1"; then echo "PASS: $N"; else echo "FAIL: $N: ${WHY:-check failed}"; fi; }

{
	echo program,workload,mode,instructions,ref_instructions,ratio,cc
	echo 'demo,w,"ref",1000,1000,1.000,clang-22'
	i=1010
	for m in off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto; do
		echo "demo,w,\"$m\",$i,1000,$(awk -v a=$i 'BEGIN { printf "%.3f", a / 1000 }'),fineibt"
		i=$((i + 10))
	done
} >"$T/bench/real-icount-fineibt.csv"
printf 'program,workload,mode,instructions,ref_instructions,ratio,cc\ndemo,w,ref,1000,1000,1.000,clang-22\ndemo,w,unpatched,900,1000,0.900,clang-lto\n' \
	>"$T/bench/real-icount-clang-lto.csv"
{
	echo program,workload,variant,round,seconds,rc
	# auto is 1.1x ref in every round although both move by 20%
	r=0
	for t in 1.0 1.2 0.8; do
		echo "demo,w,ref,$r,$t,0"
		echo "demo,w,auto,$r,$(awk -v t=$t 'BEGIN { print t * 1.1 }'),0"
		echo "demo,w,kcfi,$r,$t,1"
		r=$((r + 1))
	done
} >"$T/bench/real-wall-demo.csv"
printf 'head\n<!-- bench-real:begin (make bench-real REAL_ARGS=--readme) -->\nold table\n<!-- bench-real:end -->\ntail\n' >"$T/R.md"
printf 'no markers\n' >"$T/N.md"

out=$(BUILD=$T python3 bench/real.py --table-only --readme --readme-file "$T/R.md" demo 2>"$T/err")
rc=$?
N=bench_real-rc; WHY="exit $rc: $(cat "$T/err")"
ok [ "$rc" = 0 ]
N=bench_real-auto; WHY="no auto row 1.070 / 1.100: $(grep auto <<<"$out")"
ok grep -q -E '^\| auto \| 1\.070 / 1\.100 ±[0-9.]+% \|$' <<<"$out"
N=bench_real-modes; WHY="mode rows wrong"
ok [ "$(grep -c -E '^\| (off|kcfi|fineibt|paranoid|bhi|paranoid\+bhi|auto) \| 1\.0[1-7]0 /' <<<"$out")" = 7 ]
N=bench_real-peer; WHY="plain -flto row wrong: $(grep flto <<<"$out")"
ok grep -q -E '^\| plain -flto \| 0\.900 / - \|$' <<<"$out"
N=bench_real-missing; WHY="a peer without results is not '-'"
ok grep -q -E '^\| CFI-icall \(LTO\) \| - \|$' <<<"$out"
N=bench_real-failed; WHY="a variant whose runs failed is not marked"
ok grep -q -E '^\| kcfi \| 1\.020 / 1\.000 ±[0-9.]+% \(failed\) \|$' <<<"$out"
N=bench_real-csv; WHY="real.csv lacks the auto row"
ok grep -q '^demo,auto,1070,1.07,w,' "$T/bench/real.csv"
N=bench_real-readme; WHY="README section not replaced: $(cat "$T/R.md")"
okc '[ "$(head -n 1 "$T/R.md")" = head ] && [ "$(tail -n 1 "$T/R.md")" = tail ] && ! grep -q '\''old table'\'' "$T/R.md" && grep -q '\''^| auto | 1.070'\'' "$T/R.md"'
BUILD=$T python3 bench/real.py --table-only --readme --readme-file "$T/N.md" demo >/dev/null 2>&1
rc=$?
N=bench_real-no-markers; WHY="exit $rc or file changed"
okc '[ "$rc" = 1 ] && [ "$(cat "$T/N.md")" = "no markers" ]'
BUILD=$T python3 bench/real.py --reps 0 demo >/dev/null 2>"$T/err"
rc=$?
N=bench_real-bad-reps; WHY="exit $rc: $(cat "$T/err")"
okc '[ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ]'
BUILD=$T python3 bench/real.py --table-only --modes auto,nosuch demo >/dev/null 2>"$T/err"
rc=$?
N=bench_real-bad-mode; WHY="exit $rc: $(cat "$T/err")"
okc '[ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q nosuch "$T/err"'
N=bench_real-rounds; WHY="the note does not say 3 rounds"
ok grep -q 'median over 3 interleaved rounds' <<<"$out"
BUILD=$T python3 bench/real.py --table-only --until 25:00 demo >/dev/null 2>"$T/err"
rc=$?
N=bench_real-bad-until; WHY="exit $rc: $(cat "$T/err")"
okc '[ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ]'
