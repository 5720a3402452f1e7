#!/usr/bin/env bash
# Build real programs from Debian source packages twice (plain clang-22 -O2,
# the reference, and the kCFI compiler under test), run their own test
# suites / driver programs against both, in every fineibt mode, and compare.
#
# Usage: scripts/real/run.sh [options] [PROG...]     (default: every progs/*.sh)
#   --cc fineibt      build with $BUILD/fineibt-cc, run in every FINEIBT_CFI mode
#                     (the default when $BUILD/fineibt-cc exists and works)
#   --cc fineibt-exact  the same with exact pointer types in the hashes
#                     (FINEIBT_CC_EXACT=1: no generalized pointers)
#   --cc fineibt-jt   the same with jump tables kept (the driver's default)
#   --cc fineibt-nojt the same without jump tables (FINEIBT_CC_JUMP_TABLES=0:
#                     switches as compare chains, the driver's old default)
#   --cc standin      scripts/real/standin-cc with link-time libc veneers
#   --cc standin-raw  scripts/real/standin-cc without veneers (kCFI as compiled)
#   --cc clang-lto    scripts/real/peer-cc: plain clang-22 -flto (a peer)
#   --cc clang-cfi-icall  scripts/real/peer-cc: clang's CFI-icall (LTO,
#                     hidden visibility, generalized pointers, trap mode)
#   --modes "M ..."   FINEIBT_CFI values to run (fineibt only); default:
#                     the seven modes, then the seven again in the v6.18
#                     sequence set (MODE,seq=v6.18; docs/sequences.md)
#   --quick           each program's reduced test list (CI), no timing; of
#                     the v6.18 set only kcfi, fineibt,bhi and auto (the
#                     three write every form the set has)
#   --reps N          timing runs per workload and mode (default 3; 0 = none)
#   --bench-only      only the timing runs (no comparison, no probe)
#   --icount          instead of timing: instructions executed (callgrind,
#                     children traced) by each module's ICOUNT workloads, once
#                     per mode -> $BUILD/bench/real-programs-icount-<cc>.csv
#                     (rows of programs not counted in this run stay)
#   --list            print the programs and their tests, then exit
# Env: BUILD (build dir, default build), FINEIBT_REAL_OUT (default
#   $BUILD/real), FINEIBT_SRC_CACHE (see fetch.sh), JOBS (make -j, max 2),
#   FINEIBT_REAL_REBUILD=1 (rebuild the kCFI variant even if cached).
# Prints "PASS: real/<prog>/<test>/<mode>" and "FAIL: ..." lines, a results
# table, writes $OUT/<prog>/results-<cc>[-quick].tsv (+ this run's programs
# in $OUT/results-<cc>[-quick].tsv), outputs in $OUT/<prog>/runs-<cc>[-quick]/
# and timings in $BUILD/bench/real-programs[-icount]-<cc>.csv;
# exits non-zero on any failure.
# (The body is one { } block: bash reads it whole before running it, so
# editing this file during a run cannot break the run.)
{
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
case $BUILD in /*) bdir=$BUILD ;; *) bdir=$root/$BUILD ;; esac
OUT=${FINEIBT_REAL_OUT:-$bdir/real}
JOBS=${JOBS:-2}
[ "$JOBS" -gt 2 ] && JOBS=2
ALL_MODES="off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto"
# The same in the v6.18 sequence set; make check's subset: kcfi (Linux
# 7.3's jne/test caller), fineibt,bhi (BHI preambles, CS-padded FineIBT
# callers) and fineibt,paranoid (the jne,pn preamble, CS-padded paranoid
# callers; auto is kcfi without user IBT, docs/runtime.md).
SEQ_MODES=$(for m in $ALL_MODES; do printf '%s,seq=v6.18 ' "$m"; done)
QUICK_SEQ_MODES="kcfi,seq=v6.18 fineibt,bhi,seq=v6.18 fineibt,paranoid,seq=v6.18"

cc_kind="" modes="" quick=0 reps=3 list=0 bench_only=0 icount=0 progs=()
while [ $# -gt 0 ]; do
	case $1 in
	--cc) cc_kind=$2; shift ;;
	--modes) modes=$2; shift ;;
	--quick) quick=1 ;;
	--reps) reps=$2; shift ;;
	--list) list=1 ;;
	--bench-only) bench_only=1 ;;
	--icount) icount=1 ;;
	-h|--help) sed -n '2,30p' "$here/run.sh"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) progs+=("$1") ;;
	esac
	shift
done
[ "$quick" = 1 ] && reps=0
[ "$icount" = 1 ] && { reps=0; bench_only=1; }
if [ "${#progs[@]}" = 0 ]; then
	for f in "$here"/progs/*.sh; do p=${f##*/}; progs+=("${p%.sh}"); done
fi

# One run per output dir at a time (make check and make check-real in the
# same tree would clobber each other's trees and runs).
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
if ! flock -n 9; then
	echo "run.sh: waiting for another run using $OUT" >&2
	flock 9
fi

# ---- the compiler under test -------------------------------------------
fineibt_cc_works() {
	local d=$OUT/cc-probe
	[ -x "$bdir/fineibt-cc" ] || return 1
	mkdir -p "$d"
	printf '#include <stdio.h>\nstatic int f(int x){return x+1;}\nint (*volatile p)(int)=f;\nint main(void){printf("%%d\\n",p(41));return 0;}\n' >"$d/p.c"
	"$bdir/fineibt-cc" -O2 -o "$d/p" "$d/p.c" >"$d/log" 2>&1 &&
		[ "$("$d/p" 2>>"$d/log")" = 42 ]
}
if [ -z "$cc_kind" ]; then
	if fineibt_cc_works; then cc_kind=fineibt; else cc_kind=standin; fi
fi
case $cc_kind in
fineibt|fineibt-exact|fineibt-jt|fineibt-nojt)
	fineibt_cc_works || { echo "FAIL: real/fineibt-cc: $bdir/fineibt-cc missing or cannot build a hello program (see $OUT/cc-probe/log)"; exit 1; }
	TEST_CC=$bdir/fineibt-cc
	if [ -z "$modes" ]; then
		modes="$ALL_MODES $SEQ_MODES"
		[ "$quick" = 1 ] && modes="$ALL_MODES $QUICK_SEQ_MODES"
	fi
	# What ends up inside the programs: the driver's and the crt's sources
	# (the runtime is libfineibt.so, loaded at run time: a new one needs no
	# rebuild). FINEIBT_REAL_REBUILD=1 forces one.
	cc_id=$(cat driver/* crt/* include/fineibt.h 2>/dev/null | md5sum | cut -c1-16)
	[ "${FINEIBT_REAL_REBUILD:-0}" = 1 ] && cc_id=$cc_id.$$
	# exact pointer types in the hashes (no -fsanitize-cfi-icall-generalize-pointers)
	if [ "$cc_kind" = fineibt-exact ]; then export FINEIBT_CC_EXACT=1
	else unset FINEIBT_CC_EXACT; fi
	# jump tables back (DESIGN section 1: notrack jmp, not CFI sites)
	# (kept by default; fineibt-nojt turns them off)
	case $cc_kind in
	fineibt-jt) export FINEIBT_CC_JUMP_TABLES=1 ;;
	fineibt-nojt) export FINEIBT_CC_JUMP_TABLES=0 ;;
	*) unset FINEIBT_CC_JUMP_TABLES ;;
	esac ;;
standin|standin-raw)
	TEST_CC=$here/standin-cc
	modes=unpatched
	mkdir -p "$OUT/standin"
	export FINEIBT_STANDIN_THUNK=$OUT/standin/thunk.o
	[ "$FINEIBT_STANDIN_THUNK" -nt "$here/thunk.S" ] ||
		clang-22 -c "$here/thunk.S" -o "$FINEIBT_STANDIN_THUNK" || exit 1
	if [ "$cc_kind" = standin ]; then export FINEIBT_STANDIN_VENEERS=1
	else export FINEIBT_STANDIN_VENEERS=0; fi
	cc_id=$(cat "$here/standin-cc" "$here/thunk.S" | md5sum | cut -c1-16) ;;
clang-lto|clang-cfi-icall)
	TEST_CC=$here/peer-cc
	modes=unpatched
	export FINEIBT_PEER=${cc_kind#clang-}
	cc_id=$(cat "$here/peer-cc" | md5sum | cut -c1-16).$FINEIBT_PEER ;;
*) echo "run.sh: --cc fineibt|fineibt-exact|fineibt-jt|fineibt-nojt|standin|standin-raw|clang-lto|clang-cfi-icall" >&2; exit 2 ;;
esac
# Run against a snapshot of the runtime: others rebuild $BUILD/libfineibt.so
# while a long run goes on ("file too short" halfway through a test suite).
# LD_LIBRARY_PATH wins over the RUNPATH fineibt-cc records when asked to
# name the runtime by its soname (FINEIBT_CC_RUNPATH=1; by default it
# names the file by its path, which LD_LIBRARY_PATH cannot replace). Set
# FINEIBT_REAL_SNAPSHOT=0 to load the one in $BUILD.
if [ "$TEST_CC" = "$bdir/fineibt-cc" ] && [ "${FINEIBT_REAL_SNAPSHOT:-1}" = 1 ]; then
	mkdir -p "$OUT/rt"
	for _ in 1 2 3 4 5; do
		cp "$bdir/libfineibt.so" "$OUT/rt/.tmp.so" 2>/dev/null &&
			llvm-readelf-22 -d "$OUT/rt/.tmp.so" 2>/dev/null | grep -q SONAME && break
		sleep 2
	done
	mv -f "$OUT/rt/.tmp.so" "$OUT/rt/libfineibt.so.0" || exit 1
	export LD_LIBRARY_PATH=$OUT/rt${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export FINEIBT_CC_RUNPATH=1
fi
REF_CC=clang-22
# Results and outputs of --quick runs (make check) are kept apart from full
# ones (make check-real).
tag=$cc_kind
[ "$quick" = 1 ] && tag=$cc_kind-quick
ref_id=$(clang-22 --version | head -n 1 | md5sum | cut -c1-16)

# ---- helpers ------------------------------------------------------------
nfail=0 npass=0
mkdir -p "$OUT" "$bdir/bench"
bench_csv=$bdir/bench/real-programs-$cc_kind.csv
[ "$reps" -gt 0 ] && echo "program,workload,mode,median_s,ref_median_s,ratio,reps,cc" >"$bench_csv"
icount_csv=$bdir/bench/real-programs-icount-$cc_kind.csv
if [ "$icount" = 1 ]; then
	command -v valgrind >/dev/null || { echo "run.sh: --icount needs valgrind (apt-get install valgrind)" >&2; exit 2; }
	# this run's programs are counted again; other programs' rows (of
	# earlier or concurrent runs with another $OUT) stay
	{
		echo "program,workload,mode,instructions,ref_instructions,ratio,cc"
		# (an `if`: a missing file must not fail the group, which
		# left the header in the temporary file and the rows headless)
		if [ -f "$icount_csv" ]; then
			awk -F, -v p=" ${progs[*]} " \
				'NR > 1 && index(p, " " $1 " ") == 0' "$icount_csv"
		fi
	} >"$icount_csv.$$" && mv -f "$icount_csv.$$" "$icount_csv"
	if [ -f "$OUT/rt/libfineibt.so.0" ]; then
		mkdir -p "$OUT/rt-vg"
		llvm-strip-22 --strip-debug -o "$OUT/rt-vg/libfineibt.so.0" "$OUT/rt/libfineibt.so.0" || exit 1
	fi
fi

pass() { echo "PASS: $1"; npass=$((npass + 1)); }
fail() { echo "FAIL: $1"; nfail=$((nfail + 1)); }

# build_variant PROG VARIANT CC ID: copy the unpacked source, run the
# module's build_prog in it. Cached until build_prog, the compiler or the
# source changes. Echoes the tree path.
build_variant() {
	local prog=$1 cc=$3 id=$4 dir=$OUT/$1/$2 base key full
	base=$(cat <(declare -f build_prog) <(echo "$id $cc") \
		"${FINEIBT_SRC_CACHE:-/var/cache/fineibt-src}/$PKG/src/.unpacked" | md5sum | cut -c1-32)
	# A full build serves --quick too; a quick one (QUICK=1: the module may
	# build only what QUICK_TESTS need) serves only --quick.
	full="$base full" key="$base $([ "$quick" = 1 ] && echo quick || echo full)"
	if [ -f "$dir/.built" ] && { [ "$(cat "$dir/.built")" = "$key" ] ||
			[ "$(cat "$dir/.built")" = "$full" ]; }; then
		echo "$dir/tree"; return 0
	fi
	rm -rf "$dir"; mkdir -p "$dir"
	cp -a "${FINEIBT_SRC_CACHE:-/var/cache/fineibt-src}/$PKG/src" "$dir/tree"
	local t0=$SECONDS
	if ! (cd "$dir/tree" && CC=$cc CFLAGS=-O2 JOBS=$JOBS QUICK=$quick build_prog) \
			>"$dir/build.log" 2>&1; then
		return 1
	fi
	echo "$((SECONDS - t0))" >"$dir/build-seconds"
	echo "$key" >"$dir/.built"
	echo "$dir/tree"
}

# run_one TREE OUTFILE [MODE]: run the module's test in a scratch dir.
run_one() {
	local tree=$1 outf=$2 mode=${3:-} scratch rc
	scratch=$(mktemp -d "$OUT/scratch.XXXXXX")
	(
		cd "$scratch" || exit 1
		if [ -n "$mode" ] && [ "$mode" != unpatched ]; then export FINEIBT_CFI=$mode
		else unset FINEIBT_CFI; fi
		run_test "$TEST" "$tree"
	) >"$outf.raw" 2>&1 </dev/null
	rc=$?
	rm -rf "$scratch"
	# Trees of the two builds differ in path: name them alike.
	filter_output <"$outf.raw" | sed -e "s#$tree#<tree>#g" \
		-e "s#$OUT/scratch\.[A-Za-z0-9]*#<scratch>#g" >"$outf"
	echo "$rc" >"$outf.rc"
	return "$rc"
}

# time_all TREE_REF TREE_CFI: $reps rounds; each round times the reference
# and then every mode once, so that load from others on the shared machine
# spreads over all of them alike. Prints "variant median_seconds" lines.
time_all() {
	local r=$1 c=$2 i v t0 t1 tf=$OUT/$prog/times
	: >"$tf"
	for ((i = 0; i < reps; i++)); do
		for v in ref $modes; do
			t0=$(date +%s%N)
			if [ "$v" = ref ]; then run_one "$r" "$OUT/$prog/time.out" || true
			else run_one "$c" "$OUT/$prog/time.out" "$v" || true; fi
			t1=$(date +%s%N)
			echo "$v $(( (t1 - t0) / 1000 ))" >>"$tf"
		done
	done
	for v in ref $modes; do
		echo "$v $(awk -v v="$v" '$1 == v { print $2 }' "$tf" | sort -n |
			awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.4f", m / 1e6 }')"
	done
}

# icount_one TREE MODE: instructions (callgrind Ir, every process of the
# test summed) of one run, and the run's exit status ("N RC"). valgrind
# 3.19 cannot read clang-22's DWARF 5, so the runtime it loads is a copy
# without debug info.
icount_one() {
	local tree=$1 mode=$2 d rc
	d=$(mktemp -d "$OUT/scratch.XXXXXX")
	mkdir "$d/vg"
	(
		cd "$d" || exit 1
		if [ -n "$mode" ] && [ "$mode" != unpatched ]; then export FINEIBT_CFI=$mode
		else unset FINEIBT_CFI; fi
		[ -d "$OUT/rt-vg" ] && export LD_LIBRARY_PATH=$OUT/rt-vg
		valgrind --tool=callgrind --trace-children=yes --smc-check=all \
			--callgrind-out-file=/dev/null --log-file="$d/vg/log.%p" \
			bash "$here/one.sh" "$mod" "$TEST" "$tree"
	) >/dev/null 2>&1 </dev/null
	rc=$?
	printf '%s %s\n' "$(cat "$d"/vg/log.* | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { printf "%d", s }')" "$rc"
	rm -rf "$d"
}

# Why a run differs: CFI report lines first, else the signal, else a diff.
why() {
	local exp=$1 got=$2 rc erc line
	rc=$(cat "$got.rc") erc=$(cat "$exp.rc")
	line=$(grep -m1 -a 'fineibt:.*CFI' "$got.raw" || true)
	if [ -n "$line" ]; then echo "rc $rc (ref $erc): $line"; return; fi
	if [ "$rc" -gt 128 ]; then
		echo "rc $rc (signal $(kill -l $((rc - 128)) 2>/dev/null || echo ?), ref $erc): $(tail -n 1 "$got.raw" | cut -c1-160)"
		return
	fi
	echo "rc $rc (ref $erc), output differs: ref '$(diff "$exp" "$got" | grep -m1 -a '^<' | cut -c3-100)', got '$(diff "$exp" "$got" | grep -m1 -a '^>' | cut -c3-100)'"
}

# ---- main loop ----------------------------------------------------------
for prog in "${progs[@]}"; do
	mod=$here/progs/$prog.sh
	[ -f "$mod" ] || { fail "real/$prog: no module $mod"; continue; }
	(
	set -u
	PKG="" TESTS=() QUICK_TESTS=() BENCH=() ICOUNT=() FLAKY=() PROBE=""
	filter_output() { cat; }
	# shellcheck source=/dev/null
	. "$mod"
	if [ "$list" = 1 ]; then
		echo "$prog ($PKG): tests: ${TESTS[*]}; quick: ${QUICK_TESTS[*]}; timed: ${BENCH[*]}"
		exit 0
	fi
	npass=0 nfail=0
	bash "$here/fetch.sh" "$PKG" || { fail "real/$prog/fetch: apt-get source $PKG failed"; exit 1; }
	results=$OUT/$prog/results-$tag.tsv
	mkdir -p "$OUT/$prog"
	[ "$bench_only" = 1 ] || : >"$results"
	ref=$(build_variant "$prog" ref "$REF_CC" "$ref_id") ||
		{ fail "real/$prog/build/ref: see $OUT/$prog/ref/build.log"; tail -n 5 "$OUT/$prog/ref/build.log"; exit 1; }
	cfi=$(build_variant "$prog" "$cc_kind" "$TEST_CC" "$cc_id") ||
		{ fail "real/$prog/build/$cc_kind: see $OUT/$prog/$cc_kind/build.log"; tail -n 5 "$OUT/$prog/$cc_kind/build.log"
		  printf '%s\tbuild\t%s\tFAIL\tbuild failed\n' "$prog" "$cc_kind" >>"$results"; exit 1; }
	pass "real/$prog/build/$cc_kind"
	# What the compiler put in the main binary (sites the runtime rewrites).
	[ -n "$PROBE" ] && [ -x "$bdir/fineibt" ] &&
		"$bdir/fineibt" inspect "$cfi/${PROBE%% *}" >"$OUT/$prog/inspect-$cc_kind.txt" 2>&1
	tests=("${TESTS[@]}")
	[ "$quick" = 1 ] && tests=("${QUICK_TESTS[@]}")
	[ "$bench_only" = 1 ] && tests=()
	res=$OUT/$prog/runs-$tag
	[ "$bench_only" = 1 ] || rm -rf "$res"
	mkdir -p "$res"
	# Each mode must really be applied: run the module's probe command
	# with FINEIBT_VERBOSE=1 and look for the runtime's "rewritten to" line
	# for the main binary (auto resolves to kcfi: the kernel's rule without
	# user IBT, docs/runtime.md).
	if [ "$TEST_CC" = "$bdir/fineibt-cc" ] && [ -n "$PROBE" ] && [ "$bench_only" = 0 ]; then
		for mode in $modes; do
			want=${mode%,seq=v6.18}
			[ "$want" = auto ] && want=kcfi
			# the v6.18 set (the cfi= word, or FINEIBT_SEQ=v6.18 for
			# every mode; docs/sequences.md) shows in the mode
			if [[ $mode == *,seq=v6.18 ]] || [ "${FINEIBT_SEQ:-v4}" = v6.18 ]; then
				want=$want,seq=v6.18
			fi
			pbin=${PROBE%% *} pbin=${pbin##*/}
			got=$(cd "$cfi" && FINEIBT_CFI=$mode FINEIBT_VERBOSE=1 ./$PROBE 2>&1 >/dev/null </dev/null |
				grep -a "^fineibt: .*/$pbin: rewritten to " | head -n 1 |
				sed 's/.*rewritten to \([^ ]*\).*/\1/')
			if [ "$got" = "$want" ]; then pass "real/$prog/patched/$mode"
			else fail "real/$prog/patched/$mode: runtime did not report '$pbin: rewritten to $want' (got '${got:-nothing}')"
			fi
		done
	fi
	for TEST in "${tests[@]}"; do
		exp=$res/$TEST.ref
		# FLAKY tests (flaky in the reference build too) get 3 tries.
		tries=1
		[[ " ${FLAKY[*]} " == *" $TEST "* ]] && tries=3
		for ((t = 0; t < tries; t++)); do
			run_one "$ref" "$exp" && break
		done
		# A test must pass on the reference build to prove anything.
		if [ "$(cat "$exp.rc")" != 0 ]; then
			fail "real/$prog/$TEST/ref: the reference build fails it (rc $(cat "$exp.rc")): $(tail -n 1 "$exp.raw" | cut -c1-160)"
			continue
		fi
		for mode in $modes; do
			got=$res/$TEST.$mode
			for ((t = 0; t < tries; t++)); do
				run_one "$cfi" "$got" "$mode" || true
				[ "$(cat "$got.rc")" = "$(cat "$exp.rc")" ] && cmp -s "$exp" "$got" && break
				[ "$t" -lt $((tries - 1)) ] && echo "real/$prog/$TEST/$mode: try $((t + 1)) differs, retrying (FLAKY)"
			done
			if [ "$(cat "$got.rc")" = "$(cat "$exp.rc")" ] && cmp -s "$exp" "$got"; then
				pass "real/$prog/$TEST/$mode"
				printf '%s\t%s\t%s\tok\t%s\n' "$prog" "$TEST" "$mode" "$(cat "$got.rc")" >>"$results"
			else
				w=$(why "$exp" "$got")
				fail "real/$prog/$TEST/$mode: $w"
				printf '%s\t%s\t%s\tFAIL\t%s\n' "$prog" "$TEST" "$mode" "$w" >>"$results"
			fi
		done
	done
	if [ "$reps" -gt 0 ]; then
		for TEST in "${BENCH[@]}"; do
			time_all "$ref" "$cfi" >"$OUT/$prog/medians"
			r=$(awk '$1 == "ref" { print $2 }' "$OUT/$prog/medians")
			while read -r v m; do
				echo "$prog,$TEST,\"$v\",$m,$r,$(awk -v a="$m" -v b="$r" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'),$reps,$([ "$v" = ref ] && echo clang-22 || echo "$cc_kind")"
			done <"$OUT/$prog/medians" >>"$bench_csv"
		done
	fi
	if [ "$icount" = 1 ]; then
		[ "${#ICOUNT[@]}" = 0 ] && ICOUNT=("${BENCH[@]}")
		for TEST in "${ICOUNT[@]}"; do
			# The reference build's count, kept next to its tree until
			# it is rebuilt (every compiler's run divides by it: counted
			# once, not once per compiler)
			rf=${ref%/tree}/icount-$TEST
			if [ -s "$rf" ] && [ "$rf" -nt "${ref%/tree}/.built" ]; then
				r=$(cat "$rf") rrc=0
			else
				read -r r rrc < <(icount_one "$ref" "")
				[ "$rrc" = 0 ] && [ "${r:-0}" -gt 0 ] &&
					echo "$r" >"$rf.tmp" && mv -f "$rf.tmp" "$rf"
			fi
			# A run that fails (a CFI trap, a crash) counts for nothing:
			# its ratio is "failed", not the instructions up to the crash
			ratio=1.000
			[ "$rrc" = 0 ] || { ratio=failed; fail "real/$prog/icount/ref: $TEST exited $rrc under callgrind"; }
			echo "$prog,$TEST,\"ref\",$r,$r,$ratio,clang-22" >>"$icount_csv"
			for mode in $modes; do
				read -r m mrc < <(icount_one "$cfi" "$mode")
				ratio=$(awk -v a="$m" -v b="$r" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }')
				if [ "$mrc" != 0 ] || [ "$rrc" != 0 ]; then
					ratio=failed
					[ "$mrc" = 0 ] || fail "real/$prog/icount/$mode: $TEST exited $mrc under callgrind"
				fi
				echo "$prog,$TEST,\"$mode\",$m,$r,$ratio,$cc_kind" >>"$icount_csv"
			done
		done
	fi
	[ "$nfail" = 0 ]
	) || nfail=$((nfail + 1))
done
[ "$list" = 1 ] && exit 0

# ---- summary ------------------------------------------------------------
# This run's programs, in order (each keeps its own file from its last run).
results=$OUT/results-$tag.tsv
for prog in "${progs[@]}"; do
	cat "$OUT/$prog/results-$tag.tsv" 2>/dev/null
done >"$results"
echo
echo "results ($cc_kind; ok/total per program and mode):"
awk -F'\t' '
	{ k = $1 SUBSEP $3; tot[k]++; if ($4 == "ok") ok[k]++
	  if (!($1 in seen)) { seen[$1] = 1; po[++np] = $1 }
	  if (!($3 in ms)) { ms[$3] = 1; mo[++nm] = $3 } }
	END {
		printf "%-10s", "program"; for (j = 1; j <= nm; j++) printf " %-20s", mo[j]; printf "\n"
		for (i = 1; i <= np; i++) {
			printf "%-10s", po[i]
			for (j = 1; j <= nm; j++) { k = po[i] SUBSEP mo[j]; printf " %-20s", (ok[k] + 0) "/" (tot[k] + 0) }
			printf "\n"
		}
	}' "$results"
[ "$reps" -gt 0 ] && echo "timings: $bench_csv"
[ "$nfail" = 0 ]
exit
}
