#!/usr/bin/env bash
# Discovery benchmark: generate a kCFI program with NFUNCS functions (each
# with a preamble and one indirect call site), build it in parts (-j2),
# and time the ELF reader on it. Not a test: prints numbers.
# Usage: bench/elf_discovery.sh [NFUNCS=100000] [RUNS=7]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
n=${1:-100000}
runs=${2:-7}
out=$BUILD/bench/big
flags="-O1 -fsanitize=kcfi -fsanitize-kcfi-arity -fpatchable-function-entry=11,11
 -falign-functions=16 -fcf-protection=branch -mretpoline-external-thunk
 -mindirect-branch-cs-prefix"
make -s BUILD="$BUILD" "$BUILD/libfineibt.a"
mkdir -p "$out"
if [ ! -x "$out/big_$n" ]; then
	rm -f "$out"/*.c "$out"/*.o
	python3 bench/gen_big.py "$out" "$n" 20
	t0=$(date +%s)
	ls "$out"/*.c | xargs -P2 -I{} sh -c "clang-22 $(echo $flags) -c {} -o {}.o"
	clang-22 $flags -c tests/progs/thunk.S -o "$out/thunk.o"
	clang-22 -fuse-ld=lld --ld-path="$(command -v ld.lld-22)" -pie -o "$out/big_$n" \
		"$out"/*.o
	echo "built $out/big_$n in $(( $(date +%s) - t0 )) s"
fi
clang-22 -O2 -Iinclude $(printf -- '-I%s ' src/*/) -o "$BUILD/bench/elf_discovery" bench/elf_discovery.c \
	"$BUILD/libfineibt.a"
"$BUILD/bench/elf_discovery" "$out/big_$n" "$runs"
