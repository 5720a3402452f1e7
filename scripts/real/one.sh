#!/usr/bin/env bash
# Run one test of one module: one.sh MODULE TEST TREE (cwd: a scratch dir).
# run.sh --icount runs this under valgrind, children traced.
set -u
# shellcheck disable=SC2034
PKG="" TESTS=() QUICK_TESTS=() BENCH=() ICOUNT=() PROBE=""
# shellcheck source=/dev/null
. "$1"
run_test "$2" "$3"
