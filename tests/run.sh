#!/usr/bin/env bash
# Runs every test (unit binaries in $BUILD/tests, scripts in tests/e2e), or
# those whose name contains $1. Each test prints "PASS: case" / "FAIL: case"
# lines; a test that exits non-zero without a FAIL line counts as one failure.
# Ends with the line "N passed, M failed" and exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD FINEIBT_ROOT=$PWD
filter=${1:-}
pass=0 fail=0
logdir=$BUILD/test-logs
mkdir -p "$logdir"

run_one() {
	local kind=$1 name=$2; shift 2
	local log=$logdir/$kind-$name.log
	local rc p f
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL: $name exited with status $rc" >>"$log"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f))
	if [ "$f" = 0 ]; then
		printf '  %-28s %4d passed\n' "$name" "$p"
	else
		printf '  %-28s %4d passed, %d FAILED (log: %s)\n' "$name" "$p" "$f" "$log"
		grep '^FAIL: ' "$log" | head -n 20 | sed 's/^/      /'
	fi
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	name=${t##*/test_}
	[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
	run_one unit "$name" "$t"
done
for t in tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	name=${t##*/}; name=${name%.sh}
	[ -n "$filter" ] && [[ $name != *"$filter"* ]] && continue
	# make check SAN=1: only the e2e tests listed in tests/e2e/san.list.
	if [ -n "${FINEIBT_SAN:-}" ] && ! grep -qx "$name" tests/e2e/san.list; then
		printf '  %-28s SKIP (SAN=1: not in tests/e2e/san.list)\n' "$name"
		continue
	fi
	run_one e2e "$name" bash "$t"
done

if [ $((pass + fail)) = 0 ]; then
	echo "no test matches '${filter}'" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
