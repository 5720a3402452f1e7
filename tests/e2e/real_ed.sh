#!/usr/bin/env bash
# GNU ed from its Debian source package, built unmodified with plain
# clang-22 and with fineibt-cc; its own test suite (testsuite/check.sh,
# scripts/real/progs/ed.sh) must give the reference's output and exit
# status in every FINEIBT_CFI mode, and each mode must be reported applied.
# Full set: make check-real. Source cache: $FINEIBT_SRC_CACHE.
set -u
cd "${FINEIBT_ROOT:-$(dirname "$0")/../..}" || exit 1
. scripts/real/e2e.sh
real_e2e ed
