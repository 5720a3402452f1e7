#!/usr/bin/env bash
# What each operation that writes the runtime's state costs
# (docs/protection.md, "Writing the state through the kernel"; the
# numbers in docs/bench.md). Not a test: prints numbers.
#
#   bash bench/windows.sh [LIBDIR...]     (BUILD=build, N=200)
#
# Each LIBDIR (a directory holding libfineibt.so.0, e.g. a copy of an
# older build) is a variant, run with LD_LIBRARY_PATH=LIBDIR; with none,
# $BUILD is the only one. For each operation of bench/windows.c
# (sigaction(SIGILL); fineibt_jit_register and _unregister of a 256-byte
# region; dlsym of a libc function not asked before; dlopen + dlclose of a
# kCFI library) and each variant:
#   - wall: the median (and minimum) per call of 9 rounds of N calls,
#     variants interleaved, pinned to one CPU (taskset -c ${CPU:-1});
#   - system calls per call: strace -f -c of a run of 2K calls minus one
#     of K calls (exact);
#   - instructions per call: callgrind, the same difference.
# State the load average (printed first) with the wall times.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
N=${N:-200}
CPU=${CPU:-1}
out=$BUILD/bench/windows
mkdir -p "$out"
"$BUILD/fineibt-cc" -O2 -Iinclude bench/windows.c -o "$out/windows" -ldl
"$BUILD/fineibt-cc" -O2 -fPIC -shared tests/e2e/progs/escape_lib.c -o "$out/libwin.so"

libs=("$@")
[ ${#libs[@]} -gt 0 ] || libs=("$BUILD")
bench_variants "$out" "${libs[@]}"
names=()
for i in "${!libs[@]}"; do
	names+=("$out/v$i")
done

# run VARIANT OP N: the program's lines for OP, N calls a round
run() {
	local lib=$1 op=$2 n=$3
	case $op in
	dlopen) LD_LIBRARY_PATH=$lib taskset -c "$CPU" "$out/windows" dlopen "$n" "$out/libwin.so" ;;
	*) LD_LIBRARY_PATH=$lib taskset -c "$CPU" "$out/windows" "$op" "$n" ;;
	esac
}

# per OP VARIANT K: system calls and instructions per call (9 rounds of
# 2K calls minus 9 rounds of K)
per() {
	local lib=$1 op=$2 k=$3 s1 s2 i1 i2 extra=()
	[ "$op" = dlopen ] && extra=("$out/libwin.so")
	s1=$(LD_LIBRARY_PATH=$lib strace -f -c -o /dev/stdout "$out/windows" "$op" "$k" "${extra[@]}" |
		awk '/ total$/ { print $(NF-2) }')
	s2=$(LD_LIBRARY_PATH=$lib strace -f -c -o /dev/stdout "$out/windows" "$op" $((2 * k)) "${extra[@]}" |
		awk '/ total$/ { print $(NF-2) }')
	i1=$(LD_LIBRARY_PATH=$lib callgrind_ir "$out/windows" "$op" "$k" "${extra[@]}")
	i2=$(LD_LIBRARY_PATH=$lib callgrind_ir "$out/windows" "$op" $((2 * k)) "${extra[@]}")
	echo "$(( (s2 - s1) / (9 * k) )) $(( (i2 - i1) / (9 * k) ))"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %-28s %12s %12s %10s %12s\n' op variant median_ns min_ns syscalls instructions
for op in sigaction jit dlsym dlopen; do
	n=$N
	[ "$op" = dlopen ] && n=$((N / 10))
	[ "$op" = dlsym ] && n=$((N / 4))
	for i in "${!names[@]}"; do
		read -r sc ir <<<"$(per "${names[$i]}" "$op" $((n / 4 > 0 ? n / 4 : 1)))"
		run "${names[$i]}" "$op" "$n" | while read -r what med min; do
			printf '%-16s %-28s %12s %12s %10s %12s\n' "$what" "${libs[$i]}" \
				"$med" "$min" "$sc" "$ir"
		done
	done
done
