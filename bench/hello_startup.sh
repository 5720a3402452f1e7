#!/usr/bin/env bash
# What a fineibt-cc hello world pays at start-up over the same source
# built by plain clang-22 (issue 12). Not a test: prints numbers.
#
#   bash bench/hello_startup.sh [LIBDIR...]     (BUILD=build, RUNS=200)
#
# One hello built by fineibt-cc -O2 and one by clang-22 -O2. Each LIBDIR
# (a directory holding libfineibt.so.0, e.g. a copy of an older build) is
# a variant of the fineibt hello run with LD_LIBRARY_PATH=LIBDIR; with
# none, $BUILD is the only one. Every variant, the plain program too, runs
# with the same LD_LIBRARY_PATH length so ld.so's lookups are alike.
# Per variant:
#   - instructions (callgrind): the whole process, and those in
#     libfineibt.so (a copy without debug info, bench/lib.sh);
#   - system calls: `strace -f -c` total (the counts are exact);
#   - minor faults: getrusage of the child (RUSAGE_CHILDREN), median;
#   - wall: RUNS rounds, variants interleaved, pinned to one CPU
#     (taskset -c ${CPU:-1}), median, and the median of per-round
#     differences to the plain program.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
RUNS=${RUNS:-200}
CPU=${CPU:-1}
out=$BUILD/bench/hello_startup
mkdir -p "$out"
printf '#include <stdio.h>\nint main(void) { printf("hello, world\\n"); return 0; }\n' \
	>"$out/hello.c"
"$BUILD/fineibt-cc" -O2 -o "$out/hello_fi" "$out/hello.c"
clang-22 -O2 -o "$out/hello_plain" "$out/hello.c"

libs=("$@")
[ ${#libs[@]} -gt 0 ] || libs=("$BUILD")
# The stripped copies valgrind can read, one directory per variant.
names=()
for i in "${!libs[@]}"; do
	d=$out/v$i
	mkdir -p "$d"
	bench_strip_lib "${libs[$i]}/libfineibt.so.0" "$d/libfineibt.so.0" 2>/dev/null ||
		bench_strip_lib "${libs[$i]}/libfineibt.so" "$d/libfineibt.so.0"
	names+=("$(readlink -f "${libs[$i]}")")
done

# The runner (bench/asuser.c time): fork/exec PROG, wait; prints wall us
# and minor faults.
cc -O2 -o "$out/asuser" bench/asuser.c

# run VARIANT: one process; VARIANT p = plain, else the index of a lib.
run() {
	if [ "$1" = p ]; then
		LD_LIBRARY_PATH=$out/v0 taskset -c "$CPU" "$out/asuser" time 0 "$out/hello_plain"
	else
		LD_LIBRARY_PATH=$out/v$1 taskset -c "$CPU" "$out/asuser" time 0 "$out/hello_fi"
	fi
}
cmd() {
	if [ "$1" = p ]; then echo "$out/hello_plain"; else echo "$out/hello_fi"; fi
}
vars=(p "${!libs[@]}")

echo "variant | Ir total | Ir libfineibt | system calls | faults | wall median | extra (median of round diffs)"
for v in "${vars[@]}"; do
	d=$out/v${v/p/0}
	lp=$d
	LD_LIBRARY_PATH=$lp valgrind --tool=callgrind --callgrind-out-file="$out/cg.$v" \
		"$(cmd "$v")" >/dev/null 2>&1
	tot=$(callgrind_annotate "$out/cg.$v" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
	rt=$(callgrind_annotate --inclusive=no "$out/cg.$v" 2>/dev/null |
		awk '/libfineibt/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
	[ "$v" = p ] && rt=0
	sc=$(LD_LIBRARY_PATH=$lp strace -f -c -o "$out/sc.$v" "$(cmd "$v")" >/dev/null 2>&1;
		awk '/^100.00|total/ { print $(NF-1) == "total" ? $(NF-2) : $4 }' "$out/sc.$v" | tail -1)
	LD_LIBRARY_PATH=$lp strace -f -o "$out/strace.$v" "$(cmd "$v")" >/dev/null 2>&1 || true
	echo "$v $tot $rt $sc" >"$out/counts.$v"
done

: >"$out/wall"
for ((r = 0; r < RUNS; r++)); do
	for v in "${vars[@]}"; do
		echo "$r $v $(run "$v")" >>"$out/wall"
	done
done
for v in "${vars[@]}"; do
	read -r _ tot rt sc <"$out/counts.$v"
	python3 - "$out/wall" "$v" "$tot" "$rt" "$sc" "${names[${v/p/0}]}" <<'EOF'
import collections, statistics, sys
f, v, tot, rt, sc, name = sys.argv[1:]
rows = collections.defaultdict(dict)
for l in open(f):
    r, var, us, flt = l.split()
    rows[int(r)][var] = (float(us) * 1000, int(flt))
w = [x[v][0] for x in rows.values() if v in x]
flt = statistics.median(x[v][1] for x in rows.values() if v in x)
d = [x[v][0] - x["p"][0] for x in rows.values() if v in x and "p" in x]
label = "plain clang-22" if v == "p" else name
print(f"{label} | {int(tot):,} | {int(rt):,} | {sc} | {flt:g} | "
      f"{statistics.median(w)/1e6:.3f} ms | {statistics.median(d)/1e6:+.3f} ms")
EOF
done
echo "(system call listings: $out/strace.*)"
