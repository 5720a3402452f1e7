#!/usr/bin/env bash
# Cost of the keyed rehash (docs/protection.md "The key") and of the
# bounded stack scrub, in callgrind instruction counts
# (the machine is noisy; instructions are not): fineibt_rehash alone, per
# call over 1M calls, and at start-up of a generated program with NFUNCS
# functions and as many indirect call sites (every preamble and call site
# is rehashed), against the whole process; fi_rt_scrub_stack likewise.
# Not a test: prints numbers.
# Usage: bench/rehash_cost.sh            (BUILD=build NFUNCS=4000)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
N=${NFUNCS:-4000}
out=$BUILD/bench/rehash_cost
mkdir -p "$out"
make -s BUILD="$BUILD" "$BUILD/libfineibt.a" "$BUILD/libfineibt.so" "$BUILD/fineibt-cc"

cat >"$out/loop.c" <<'C'
#include <stdio.h>
#include "fineibt.h"
int main(void)
{
	struct fineibt_key key = { { 0x5e, 0xed, 0x12, 0x34 } };
	unsigned sum = 0;

	for (unsigned i = 0; i < 1000000; i++)
		sum += fineibt_rehash(i * 2654435761u, &key);
	printf("%u\n", sum);
	return 0;
}
C
clang-22 -O2 -Iinclude -o "$out/loop" "$out/loop.c" "$BUILD/libfineibt.a" -ldl -lpthread
# valgrind cannot read clang-22's DWARF 5 (here and below): no debug info.
llvm-objcopy-22 --strip-debug "$out/loop"

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

ir() {	# ir PROG CFI [callgrind options...]: instructions collected
	local prog=$1 cfi=$2
	shift 2
	LD_LIBRARY_PATH=$out FINEIBT_CFI=$cfi callgrind_ir "$@" "$prog"
}
loop=$(ir "$out/loop" off --collect-atstart=no --toggle-collect=fineibt_rehash)
echo "fineibt_rehash: $loop instructions for 1M calls ($((loop / 1000000)) per call)"
printf '%-20s %14s %14s %8s %14s\n' mode process rehash "rehash%" scrub
for m in kcfi fineibt auto; do
	all=$(ir "$out/big" "$m")
	reh=$(ir "$out/big" "$m" --collect-atstart=no --toggle-collect=fineibt_rehash)
	scr=$(ir "$out/big" "$m" --collect-atstart=no --toggle-collect=fi_rt_scrub_stack)
	printf '%-20s %14s %14s %7s%% %14s\n' "$m" "$all" "$reh" \
		"$(( reh * 100 / (all ? all : 1) ))" "$scr"
done
