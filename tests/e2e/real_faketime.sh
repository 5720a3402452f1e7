#!/usr/bin/env bash
# libfaketime from its Debian source package, built unmodified with plain
# clang-22 and with fineibt-cc: an LD_PRELOAD library that calls the
# system's time functions through pointers from dlsym(RTLD_NEXT), also when
# preloaded into an uninstrumented program (/bin/date). Its reduced tests
# (scripts/real/progs/faketime.sh, QUICK_TESTS) must give the reference's
# output and exit status in every FINEIBT_CFI mode. Full set: make
# check-real. Source cache: $FINEIBT_SRC_CACHE.
set -u
cd "${FINEIBT_ROOT:-$(dirname "$0")/../..}" || exit 1
. scripts/real/e2e.sh
real_e2e faketime
