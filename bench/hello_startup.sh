#!/usr/bin/env bash
# What a fineibt-cc hello world pays at start-up over the same source
# built by plain clang-22 (issue 12). Not a test: prints numbers.
#
#   bash bench/hello_startup.sh [LIBDIR...]     (BUILD=build, RUNS=200)
#
# One hello built by fineibt-cc -O2 and one by clang-22 -O2. Each LIBDIR
# (a directory holding libfineibt.so.0, e.g. a copy of an older build) is
# a variant of the fineibt hello run with LD_LIBRARY_PATH=LIBDIR (that
# hello names the runtime by its soname: FINEIBT_CC_RUNPATH=1); with
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
#
# With COUNTS=1, instead: deterministic counts only (no wall time), for
# each program of PROGS (default "hello gen1000 gen8000": bench/gen_big.py
# programs of N functions, -O1 as in bench/startup_scale.py) and each
# mode of MODES (default "kcfi,norand auto patched": patched is the
# file written by `fineibt patch --cfi=$PATCH_CFI`, default kcfi, run
# with the mode it carries): instructions (callgrind: the whole process,
# ld.so, libfineibt.so, libc) and system calls (strace -f -c: calls and
# failed ones), each against the same source built by plain clang-22.
# SQLITE="FINEIBT-EXE PLAIN-EXE [ARGS]" adds a pair built elsewhere (the
# sqlite3 speedtest1 of scripts/real, run with --help).
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
FINEIBT_CC_RUNPATH=1 "$BUILD/fineibt-cc" -O2 -o "$out/hello_fi_rp" "$out/hello.c"
clang-22 -O2 -o "$out/hello_plain" "$out/hello.c"

# ---------------------------------------------------------------- counts
counts_row() {	# LABEL MODE FI-EXE PLAIN-EXE [ARGS...]
	local label=$1 mode=$2 fi=$3 pl=$4 cg a b
	shift 4
	cg=$out/cg.counts
	valgrind --tool=callgrind --callgrind-out-file="$cg" "$pl" "$@" >/dev/null 2>&1
	read -r pt pld _ plc <<<"$(callgrind_objects "$cg")"
	read -r ps pe <<<"$(strace_counts "$pl" "$@")"
	if [ "$mode" = patched ]; then
		env -u FINEIBT_CFI valgrind --tool=callgrind --callgrind-out-file="$cg" \
			"$fi.patched" "$@" >/dev/null 2>&1
		read -r ft fld flf flc <<<"$(callgrind_objects "$cg")"
		read -r fs fe <<<"$(unset FINEIBT_CFI; strace_counts "$fi.patched" "$@")"
	else
		FINEIBT_CFI=$mode valgrind --tool=callgrind --callgrind-out-file="$cg" \
			"$fi" "$@" >/dev/null 2>&1
		read -r ft fld flf flc <<<"$(callgrind_objects "$cg")"
		read -r fs fe <<<"$(FINEIBT_CFI=$mode strace_counts "$fi" "$@")"
	fi
	printf '%s | %s | %d (+%d) | %d (+%d) | %d | %d (+%d) | %d (+%d) | %d (+%d)\n' \
		"$label" "$mode" "$ft" $((ft - pt)) "$fld" $((fld - pld)) "$flf" \
		"$flc" $((flc - plc)) "$fs" $((fs - ps)) "$fe" $((fe - pe))
}

if [ "${COUNTS:-0}" = 1 ]; then
	PATCH_CFI=${PATCH_CFI:-kcfi}
	echo "program | mode | Ir total (+plain) | Ir ld.so (+plain) | Ir libfineibt | Ir libc (+plain) | system calls (+plain) | failed (+plain)"
	for p in ${PROGS:-hello gen1000 gen8000}; do
		case $p in
		hello) fi=$out/hello_fi pl=$out/hello_plain ;;
		gen*)
			n=${p#gen} d=$out/$p fi=$out/$p/$p pl=$out/$p/$p.plain
			if [ ! -x "$fi" ] || [ "$fi" -ot "$BUILD/libfineibt.so" ]; then
				python3 bench/gen_big.py "$d" "$n" 4 >/dev/null
				"$BUILD/fineibt-cc" -O1 -o "$fi" "$d"/part_*.c "$d/main.c"
				clang-22 -O1 -o "$pl" "$d"/part_*.c "$d/main.c"
			fi ;;
		*) echo "unknown program $p" >&2; exit 2 ;;
		esac
		rm -f "$fi.patched"
		"$BUILD/fineibt" patch -q "$fi" -o "$fi.patched" --cfi="$PATCH_CFI" --key 00112233445566778899aabbccddeeff
		for m in ${MODES:-kcfi,norand auto patched}; do
			counts_row "$p" "$m" "$fi" "$pl"
		done
	done
	if [ -n "${SQLITE:-}" ]; then
		read -r sfi spl sargs <<<"$SQLITE"
		rm -f "$sfi.patched"
		"$BUILD/fineibt" patch -q "$sfi" -o "$sfi.patched" --cfi="$PATCH_CFI" --key 00112233445566778899aabbccddeeff
		for m in ${MODES:-kcfi,norand auto patched}; do
			# shellcheck disable=SC2086
			counts_row sqlite3 "$m" "$sfi" "$spl" ${sargs:---help}
		done
	fi
	exit 0
fi

libs=("$@")
[ ${#libs[@]} -gt 0 ] || libs=("$BUILD")
# The stripped copies valgrind can read, one directory per variant.
bench_variants "$out" "${libs[@]}"
names=()
for i in "${!libs[@]}"; do
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
		LD_LIBRARY_PATH=$out/v$1 taskset -c "$CPU" "$out/asuser" time 0 "$out/hello_fi_rp"
	fi
}
cmd() {
	if [ "$1" = p ]; then echo "$out/hello_plain"; else echo "$out/hello_fi_rp"; fi
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
