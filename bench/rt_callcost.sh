#!/usr/bin/env bash
# Nanoseconds per indirect call (arity 0, 1, 2) in each cfi= mode, median
# of RUNS runs, on a program built with fineibt-cc (not a test).
#   bash bench/rt_callcost.sh [BUILD]
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-7}
OUT=$BUILD/bench/rt_callcost
mkdir -p "$OUT"
"$BUILD/fineibt-cc" -O2 bench/rt_callcost.c -o "$OUT/callcost"
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-24s %8s %8s %8s\n' mode arity0 arity1 arity2
for m in off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi; do
	for ((i = 0; i < RUNS; i++)); do FINEIBT_CFI=$m "$OUT/callcost"; done >"$OUT/r"
	printf '%-24s %8s %8s %8s\n' "$m" "$(cut -d' ' -f1 "$OUT/r" | med)" \
		"$(cut -d' ' -f2 "$OUT/r" | med)" "$(cut -d' ' -f3 "$OUT/r" | med)"
done
