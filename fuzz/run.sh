#!/usr/bin/env bash
# Run the libFuzzer harnesses: replay tests/fuzz-regress/<name>/*, then fuzz
# each for FUZZ_SECONDS from its seed corpus plus the corpus kept in
# $FUZZ_BUILD/corpus/<name>, and report executions and coverage.
# Usage: fuzz/run.sh [NAME-SUBSTRING]   (make fuzz; tests/e2e/fuzz_smoke.sh)
# Prints "PASS: fuzz-<name>: ..." / "FAIL: ..." lines and a table in
# $FUZZ_BUILD/summary.txt. Crashing inputs are saved under $FUZZ_BUILD/crash/.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
FUZZ_BUILD=${FUZZ_BUILD:-$BUILD/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# FUZZ_SEED fixes libFuzzer's random seed (the smoke run in make check uses
# one, so CI walks the same inputs every time); empty = a new seed per run.
FUZZ_SEED=${FUZZ_SEED:-}
filter=${1:-}
seeds=$FUZZ_BUILD/seeds
rc=0

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; rc=1; }

# Seed corpora, rebuilt when the test programs or the generators change.
make_seeds() {
	local progs=$BUILD/progs stamp=$seeds/.done
	bash tests/progs/build.sh "$progs" || return 1
	if [ -f "$stamp" ] && [ -z "$(find "$progs" fuzz/seeds.py tests/malformed/gen.py \
		"$BUILD/fineibt" -newer "$stamp" -print -quit)" ]; then
		return 0
	fi
	rm -rf "$seeds" && mkdir -p "$seeds/malformed" &&
	python3 tests/malformed/gen.py "$progs/prog_pie" "$seeds/malformed" >/dev/null &&
	python3 fuzz/seeds.py "$BUILD/fineibt" "$progs" "$seeds/malformed" "$seeds" &&
	touch "$stamp"
}

# The seed directory of each harness.
seed_dir() {
	case $1 in
	elf|inspect|patch) echo "$seeds/elf" ;;
	*) echo "$seeds/$1" ;;
	esac
}

run_one() {
	local name=$1 bin=$FUZZ_BUILD/fuzz_$1 corpus=$FUZZ_BUILD/corpus/$1
	local log=$FUZZ_BUILD/log/$1.log regress=tests/fuzz-regress/$1 saved
	mkdir -p "$corpus" "$FUZZ_BUILD/log" "$FUZZ_BUILD/crash"
	# The ELF harnesses share their saved inputs: each replays all three.
	case $name in
	elf|inspect|patch) saved=$(ls -d tests/fuzz-regress/{elf,inspect,patch}/* 2>/dev/null) ;;
	*) saved=$(ls -d "$regress"/* 2>/dev/null) ;;
	esac
	if [ -n "$saved" ]; then
		# shellcheck disable=SC2086
		if "$bin" -runs=1 $saved >"$log.regress" 2>&1; then
			pass "fuzz-$name-regress: $(wc -w <<<"$saved") saved inputs replay cleanly"
		else
			fail "fuzz-$name-regress" "a saved input fails again (log: $log.regress)"
		fi
	fi
	"$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		${FUZZ_SEED:+-seed=$FUZZ_SEED} \
		-print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/crash/$name-" \
		"$corpus" "$(seed_dir "$name")" >"$log" 2>&1
	local st=$? execs cov ft
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	printf '%-8s %4ss execs=%-9s cov=%-6s ft=%-6s corpus=%s\n' "$name" \
		"$FUZZ_SECONDS" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
		"$(ls "$corpus" | wc -l)" >>"$FUZZ_BUILD/summary.txt"
	if [ "$st" = 0 ]; then
		pass "fuzz-$name: ${execs:-?} execs in ${FUZZ_SECONDS}s, cov ${cov:-?} ft ${ft:-?}, no crash"
	else
		fail "fuzz-$name" "crash or leak (log: $log; input: $(ls -t "$FUZZ_BUILD"/crash/"$name"-* 2>/dev/null | head -1); add it under $regress/ once fixed)"
	fi
}

make_seeds >"$FUZZ_BUILD/seeds.log" 2>&1 || { fail seeds "could not build the seed corpora (log: $FUZZ_BUILD/seeds.log)"; exit 1; }
: >"$FUZZ_BUILD/summary.txt"
for src in fuzz/fuzz_*.c; do
	name=${src#fuzz/fuzz_}; name=${name%.c}
	[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
	run_one "$name"
done
cat "$FUZZ_BUILD/summary.txt" >&2
exit $rc
