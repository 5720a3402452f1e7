#!/usr/bin/env bash
# qsort with strcmp in a stock kCFI program (docs/compat.md, "Stock kCFI
# modules"): callgrind instruction counts per sort of 512 strings, the
# program built by clang-22 without CFI (plain: libc's strcmp pointer)
# against the same built with -fsanitize=kcfi alone and run under
# the runtime (LD_PRELOAD, as `fineibt run` does) in each mode (its &strcmp is a typed veneer: libc's qsort
# calls it). Per-sort cost = (Ir(N2) - Ir(N1)) / (N2 - N1): start-up and
# the rewrite drop out. Not a test: prints numbers.
# Usage: bench/stock_qsort.sh [N1=20] [N2=120]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
n1=${1:-20}
n2=${2:-120}
out=$BUILD/bench/stock_qsort
mkdir -p "$out"
clang-22 -O2 -o "$out/plain" bench/stock_qsort.c
clang-22 -O2 -fsanitize=kcfi -o "$out/stock" bench/stock_qsort.c
bench_strip_lib "$BUILD/libfineibt.so" "$out/libfineibt.so.0"
cmps=$("$out/plain" 1 count)

per_sort() {	# per_sort CFI PRELOAD PROG
	local a b
	a=$(LD_PRELOAD=$2 FINEIBT_CFI=$1 callgrind_ir "$3" "$n1")
	b=$(LD_PRELOAD=$2 FINEIBT_CFI=$1 callgrind_ir "$3" "$n2")
	echo $(( (b - a) / (n2 - n1) ))
}
base=$(per_sort auto "" "$out/plain")
printf '%d comparisons per sort\n' "$cmps"
printf '%-24s %12s %10s %14s\n' build/mode "Ir/sort" "vs plain" "per comparison"
printf '%-24s %12s %10s %14s\n' "plain clang-22" "$base" 0 0
for m in off kcfi fineibt fineibt,paranoid auto; do
	# what `fineibt run` does for a program without the audit's dlopen
	# hook: the runtime preloaded (the stripped copy, for valgrind)
	r=$(per_sort "$m" "$out/libfineibt.so.0" "$out/stock")
	printf '%-24s %12s %+10d %14s\n' "stock, $m" "$r" $(( r - base )) \
		"$(awk -v d=$(( r - base )) -v n="$cmps" 'BEGIN { printf "%+.2f", d / n }')"
done
