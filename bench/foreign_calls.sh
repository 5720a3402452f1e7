#!/usr/bin/env bash
# Cost of calls through dlsym veneers (docs/compat.md): callgrind
# instruction counts of tests/e2e/progs/compat_dlsym (per round: cos
# through its type, strlen by tail call and through another type, all
# three from dlsym/dlvsym) built with fineibt-cc in each mode, against
# the same program built with plain clang-22 (no CFI, raw pointers).
# Per-round cost = (Ir(N2) - Ir(N1)) / (N2 - N1), so start-up and the
# one SIGILL per site drop out. Not a test: prints numbers.
# Usage: bench/foreign_calls.sh [N1=2000] [N2=12000]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
n1=${1:-2000}
n2=${2:-12000}
out=$BUILD/bench/foreign
mkdir -p "$out"
src=tests/e2e/progs/compat_dlsym.c
clang-22 -O2 -o "$out/plain" "$src"
"$BUILD/fineibt-cc" -O2 -o "$out/fcc" "$src"

# The library without debug info (bench/lib.sh), found first through
# LD_LIBRARY_PATH.
bench_strip_lib "$BUILD/libfineibt.so" "$out/libfineibt.so.0"

ir() {	# ir CFI BIN ROUNDS
	LD_LIBRARY_PATH=$out FINEIBT_CFI=$1 callgrind_ir "$2" "$3"
}
per_round() {
	local a b
	a=$(ir "$1" "$2" "$n1")
	b=$(ir "$1" "$2" "$n2")
	echo $(( (b - a) / (n2 - n1) ))
}
base=$(per_round auto "$out/plain")
printf '%-22s %14s %10s\n' mode "Ir/round" "vs plain"
printf '%-22s %14s %10s\n' "plain clang-22" "$base" 0
for m in off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto; do
	r=$(per_round "$m" "$out/fcc")
	printf '%-22s %14s %+10d\n' "$m" "$r" $(( r - base ))
done
