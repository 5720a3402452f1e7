#!/usr/bin/env bash
# Cost of the coarse check (docs/compat.md, docs/bench.md "The coarse
# check"): callgrind instructions per call through an unprototyped
# pointer (no kCFI check; the thunk's coarse check) and through a typed
# one (the kCFI-family check), in each mode, against the same program
# built with plain clang-22 (no CFI: a plain indirect call). Per call =
# (Ir(N2) - Ir(N1)) / (N2 - N1): start-up drops out; the loop's own
# instructions are in every row alike. Not a test: prints numbers.
# Usage: bench/coarse_calls.sh [N1=20000] [N2=120000]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
n1=${1:-20000}
n2=${2:-120000}
out=$BUILD/bench/coarse
mkdir -p "$out"
src=bench/coarse_calls.c
clang-22 -O2 -Wno-deprecated-non-prototype -o "$out/plain" "$src"
"$BUILD/fineibt-cc" -O2 -Wno-deprecated-non-prototype -o "$out/fcc" "$src"
bench_strip_lib "$BUILD/libfineibt.so" "$out/libfineibt.so.0"

per_call() {	# per_call CFI BIN KIND
	local a b
	a=$(LD_LIBRARY_PATH=$out FINEIBT_CFI=$1 callgrind_ir "$2" "$3" "$n1")
	b=$(LD_LIBRARY_PATH=$out FINEIBT_CFI=$1 callgrind_ir "$2" "$3" "$n2")
	awk -v a="$a" -v b="$b" -v n=$((n2 - n1)) 'BEGIN { printf "%.1f", (b - a) / n }'
}
pt=$(per_call auto "$out/plain" typed)
pu=$(per_call auto "$out/plain" unproto)
printf '%-20s %12s %12s %14s\n' mode "typed Ir" "unproto Ir" "unproto-plain"
printf '%-20s %12s %12s %14s\n' "plain clang-22" "$pt" "$pu" 0
for m in off kcfi kcfi,norand fineibt fineibt,paranoid fineibt,bhi; do
	t=$(per_call "$m" "$out/fcc" typed)
	u=$(per_call "$m" "$out/fcc" unproto)
	printf '%-20s %12s %12s %+14.1f\n' "$m" "$t" "$u" "$(awk -v u="$u" -v p="$pu" 'BEGIN { print u - p }')"
done

# The lookup alone: bitmap (what coarse.S does) vs binary search over the
# sorted entries, 2,000 entries in 1 MiB of text (bash has about that).
clang-22 -O2 -o "$out/lookup" bench/coarse_lookup.c
lk() {	# lk KIND
	local a b
	a=$(callgrind_ir "$out/lookup" "$1" "$n1" 2000)
	b=$(callgrind_ir "$out/lookup" "$1" "$n2" 2000)
	awk -v a="$a" -v b="$b" -v n=$((n2 - n1)) 'BEGIN { printf "%.1f", (b - a) / n }'
}
printf '\n%-20s %12s\n' lookup "Ir/lookup"
printf '%-20s %12s\n' "bitmap" "$(lk bits)" "sorted (binary)" "$(lk sorted)"
