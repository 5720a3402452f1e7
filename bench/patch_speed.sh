#!/usr/bin/env bash
# Pass benchmark: fi_patch_image over the >= 100k-function kCFI program that
# bench/elf_discovery.sh builds (built here through it when missing), and
# over an in-memory synthetic image of N functions + N call sites.
# Not a test: prints sites per second, medians. Target: >= 20 M sites/s.
# Usage: bench/patch_speed.sh [NFUNCS=100000] [RUNS=9]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
n=${1:-100000}
runs=${2:-9}
big=$BUILD/bench/big/big_$n
make -s BUILD="$BUILD" "$BUILD/libfineibt.a"
[ -x "$big" ] || bash bench/elf_discovery.sh "$n" 1 >/dev/null
mkdir -p "$BUILD/bench"
clang-22 -O2 -Iinclude $(printf -- '-I%s ' src/*/) -o "$BUILD/bench/patch_speed" bench/patch_speed.c \
	"$BUILD/libfineibt.a"
"$BUILD/bench/patch_speed" "$big" "$runs"
"$BUILD/bench/patch_speed" --synthetic "$n" "$runs"
