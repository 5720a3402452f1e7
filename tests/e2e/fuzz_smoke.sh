#!/usr/bin/env bash
# fuzz_smoke: a short bounded round of every libFuzzer harness (fuzz/*.c),
# after replaying every saved crash input under tests/fuzz-regress/. The
# long runs are `make fuzz` (FUZZ_SECONDS=60 per harness; docs/robustness.md).
# FUZZ_SMOKE_SECONDS (default 10) bounds each harness. The seed is fixed
# (FUZZ_SEED, default 1) so that make check explores the same inputs on every
# run: a new find belongs to `make fuzz` (random seeds), not to a CI lottery.
set -u
if [ -n "${FINEIBT_SAN:-}" ]; then
	# The harnesses carry ASan+UBSan already; the plain `make check` runs them.
	echo "SKIP: fuzz_smoke: under SAN=1 (the harnesses are sanitized in every build)"
	exit 0
fi
BUILD=${BUILD:-build}
cd "${FINEIBT_ROOT:-.}"
FUZZ_BUILD=$BUILD/fuzz
mkdir -p "$FUZZ_BUILD"
if ! make -s BUILD="$BUILD" fuzz-build >"$FUZZ_BUILD/build.log" 2>&1; then
	echo "FAIL: fuzz-build: could not build the harnesses (log: $FUZZ_BUILD/build.log)"
	exit 1
fi
echo "PASS: fuzz-build: $(ls fuzz/fuzz_*.c | wc -l) harnesses built with -fsanitize=fuzzer,address,undefined"
BUILD=$BUILD FUZZ_BUILD=$FUZZ_BUILD FUZZ_SEED=${FUZZ_SEED:-1} FUZZ_SECONDS=${FUZZ_SMOKE_SECONDS:-10} bash fuzz/run.sh
