#!/usr/bin/env bash
# Cost of direct PLT entries (docs/protection.md, "A writable GOT: direct
# PLT entries"): callgrind instruction counts of bench/plt_loop.c (per
# round: 4 calls into libc through the PLT), a stock clang-22 kCFI
# program linked with partial RELRO and lazy binding (GNU ld and lld),
# run under `fineibt run`, with its PLT entries made direct (the default:
# LD_BIND_NOW=1) and left reading the GOT (LD_BIND_NOW= : lazy). Per-round
# cost = (Ir(N2) - Ir(N1)) / (N2 - N1), start-up = Ir(N1) - N1 x round.
# Not a test: prints numbers.
# Usage: bench/plt.sh [N1=2000] [N2=12000]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
n1=${1:-2000}
n2=${2:-12000}
out=$BUILD/bench/plt
mkdir -p "$out"
cf="-O2 -fno-builtin -fsanitize=kcfi -fpatchable-function-entry=11,11 -fsanitize-cfi-icall-generalize-pointers -fcf-protection=branch"
clang-22 $cf -Wl,-z,relro,-z,lazy -o "$out/bfd" bench/plt_loop.c
clang-22 $cf -fuse-ld=lld -Wl,-z,relro,-z,lazy -o "$out/lld" bench/plt_loop.c

# The library without debug info (bench/lib.sh), preloaded as `fineibt
# run` does (the audit library, for later dlopens, plays no part here).
bench_strip_lib "$BUILD/libfineibt.so" "$out/libfineibt.so"

ir() {	# ir BIND BIN ROUNDS: the program's Ir as under `fineibt run`
	LD_PRELOAD=$out/libfineibt.so LD_BIND_NOW=$1 FINEIBT_CFI=auto \
		callgrind_ir "$2" "$3"
}
printf '%-6s %-22s %10s %12s\n' link "PLT entries" "Ir/round" "start-up Ir"
for b in bfd lld; do
	for bind in 1 ""; do
		a=$(ir "$bind" "$out/$b" "$n1")
		c=$(ir "$bind" "$out/$b" "$n2")
		r=$(( (c - a) / (n2 - n1) ))
		printf '%-6s %-22s %10s %12s\n' "$b" \
			"$([ -n "$bind" ] && echo "direct (BIND_NOW)" || echo "GOT-reading (lazy)")" \
			"$r" $(( a - n1 * r ))
	done
done

# libc's own PLT (every module's PLT is made direct, not only kCFI
# ones): bench/plt_libc.c, a fineibt-cc program (full RELRO) whose strdup
# calls strlen and memcpy through libc's PLT. Run directly (libc's
# IRELATIVE slots are bound at load: made direct) with this build's
# runtime and, if BASE=DIR names another build directory, with its
# libfineibt.so (e.g. one from before the change) for comparison.
"$BUILD/fineibt-cc" -O2 -fno-builtin -o "$out/libc" bench/plt_libc.c
echo
printf '%-28s %10s %12s\n' "fineibt-cc program, runtime" "Ir/round" "start-up Ir"
for lib in "$BUILD" ${BASE:+"$BASE"}; do
	mkdir -p "$out/base"
	bench_strip_lib "$lib/libfineibt.so" "$out/base/libfineibt.so.0"
	a=$(LD_LIBRARY_PATH=$out/base FINEIBT_CFI=auto callgrind_ir "$out/libc" "$n1")
	c=$(LD_LIBRARY_PATH=$out/base FINEIBT_CFI=auto callgrind_ir "$out/libc" "$n2")
	r=$(( (c - a) / (n2 - n1) ))
	printf '%-28s %10s %12s\n' "${lib}" "$r" $(( a - n1 * r ))
done
