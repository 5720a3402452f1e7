#!/usr/bin/env bash
# Cost of verifying the sealed scratch copy before it replaces a module's
# text (issue 18 item 1; docs/protection.md): callgrind instruction counts
# of fi_patch_verify (the check: the patch passes again, comparing instead
# of writing, plus the byte compare of the gaps) against fi_patch_image
# (the rewrite itself) and the whole process, at start-up of a generated
# program with NFUNCS functions and as many indirect call sites, per mode.
# Not a test: prints numbers.
# Usage: bench/live_verify.sh            (BUILD=build NFUNCS=4000)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
N=${NFUNCS:-4000}
out=$BUILD/bench/live_verify
mkdir -p "$out"
src=$out/big.c
if [ ! -e "$src" ] || [ "$(head -1 "$src")" != "/* $N */" ]; then
	{
		echo "/* $N */"
		echo 'typedef long (*fn_t)(long);'
		for ((i = 0; i < N; i++)); do
			echo "__attribute__((noinline)) long l$i(long x) { return x + $i; }"
		done
		echo 'fn_t tab[] = {'
		for ((i = 0; i < N; i++)); do echo "l$i,"; done
		echo '};'
		for ((i = 0; i < N; i++)); do
			echo "__attribute__((noinline)) long c$i(fn_t *t, long x) { return t[$i](x) + 1; }"
		done
		echo 'int main(void) { return (int)(c0(tab, 1) != 2); }'
	} >"$src"
fi
"$BUILD/fineibt-cc" -O1 -o "$out/big" "$src"
bench_strip_lib "$BUILD/libfineibt.so" "$out/libfineibt.so.0"

ir() {	# ir CFI [callgrind options...]: instructions collected
	local cfi=$1
	shift
	LD_LIBRARY_PATH=$out FINEIBT_CFI=$cfi callgrind_ir "$@" "$out/big"
}
printf '%-20s %14s %14s %14s %8s\n' mode process patch_image verify "verify%"
for m in kcfi fineibt fineibt,paranoid fineibt,bhi auto; do
	all=$(ir "$m")
	pat=$(ir "$m" --collect-atstart=no --toggle-collect=fi_patch_image)
	ver=$(ir "$m" --collect-atstart=no --toggle-collect=fi_patch_verify)
	printf '%-20s %14s %14s %14s %7s%%\n' "$m" "$all" "$pat" "$ver" \
		"$(( ver * 100 / (all ? all : 1) ))"
done
