#!/usr/bin/env bash
# What the keyed rehash costs at start-up, per site, in callgrind
# instruction counts (docs/protection.md, "The key"; the machine is noisy,
# instructions are not): for a fineibt-cc hello, the 8,000-function program
# of bench/gen_big.py and, when SPEEDTEST1 names one, a fineibt-cc build of
# sqlite3's speedtest1 (`--size 0`; scripts/real builds it), each run
# against every LIBDIR given (a directory holding libfineibt.so.0, e.g. a
# build of another commit; default $BUILD) in FINEIBT_CFI=$MODE (default
# kcfi: the rehash without any other rewriting). Per program and library:
# the whole process, the runtime's start-up (fineibt_rt_hook, inclusive),
# the instructions in fineibt_rehash (about 990 per call; bench/
# rehash_cost.sh), and the sites the runtime rewrote (FINEIBT_VERBOSE). Not a test: prints numbers.
# Usage: bench/rehash_startup.sh [LIBDIR...]   (BUILD=build MODE=kcfi SPEEDTEST1=)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
MODE=${MODE:-kcfi}
out=$BUILD/bench/rehash_startup
mkdir -p "$out"
make -s BUILD="$BUILD" "$BUILD/libfineibt.so" "$BUILD/fineibt-cc"

printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$out/hello.c"
"$BUILD/fineibt-cc" -O2 -o "$out/hello" "$out/hello.c"
if [ ! -x "$out/gen8000" ]; then
	python3 bench/gen_big.py "$out/gen" 8000 4 >/dev/null
	for f in "$out"/gen/*.c; do
		"$BUILD/fineibt-cc" -O1 -c "$f" -o "${f%.c}.o"
	done
	"$BUILD/fineibt-cc" -o "$out/gen8000" "$out"/gen/*.o
fi
progs=("$out/hello" "$out/gen8000")
if [ -n "${SPEEDTEST1:-}" ]; then
	llvm-objcopy-22 --strip-debug "$SPEEDTEST1" "$out/speedtest1"
	progs+=("$out/speedtest1 --size 0")
fi

libs=("$@")
[ ${#libs[@]} -gt 0 ] || libs=("$BUILD")
for i in "${!libs[@]}"; do
	mkdir -p "$out/v$i"
	bench_strip_lib "${libs[$i]}/libfineibt.so.0" "$out/v$i/libfineibt.so.0" 2>/dev/null ||
		bench_strip_lib "${libs[$i]}/libfineibt.so" "$out/v$i/libfineibt.so.0"
done

ir() {	# ir LIBDIR PROG... [callgrind options first]: instructions collected
	local lib=$1
	shift
	LD_LIBRARY_PATH=$lib FINEIBT_CFI=$MODE callgrind_ir "$@"
}
printf '%-12s %-4s %12s %10s %10s %7s %9s\n' program lib process rt_hook rehash sites "hook/site"
for p in "${progs[@]}"; do
	# shellcheck disable=SC2086
	set -- $p
	for i in "${!libs[@]}"; do
		d=$out/v$i
		all=$(ir "$d" "$@")
		hook=$(ir "$d" --collect-atstart=no --toggle-collect=fineibt_rt_hook "$@")
		reh=$(ir "$d" --collect-atstart=no --toggle-collect=fineibt_rehash "$@")
		sites=$(LD_LIBRARY_PATH=$d FINEIBT_CFI=$MODE FINEIBT_VERBOSE=1 "$@" 2>&1 >/dev/null |
			sed -n 's/.*rewritten to .*; \([0-9]*\) preambles, \([0-9]*\) call sites.*/\1 \2/p' |
			awk '{ n += $1 + $2 } END { print n + 0 }')
		printf '%-12s v%-3s %12s %10s %10s %7s %9s\n' "${1##*/}" "$i" "$all" "$hook" \
			"$reh" "$sites" "$(( hook / (sites ? sites : 1) ))"
	done
done
