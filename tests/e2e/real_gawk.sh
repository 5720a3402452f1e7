#!/usr/bin/env bash
# GNU awk from its Debian source package, built unmodified with plain
# clang-22 and with fineibt-cc: a plug-in host whose extensions are loaded
# with dlopen and called both ways through pointers. Its shlib tests
# (scripts/real/progs/gawk.sh, QUICK_TESTS) must give the reference's
# output and exit status in every FINEIBT_CFI mode. Full set: make
# check-real. Source cache: $FINEIBT_SRC_CACHE.
set -u
cd "${FINEIBT_ROOT:-$(dirname "$0")/../..}" || exit 1
. scripts/real/e2e.sh
real_e2e gawk
