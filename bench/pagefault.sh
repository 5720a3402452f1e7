#!/usr/bin/env bash
# What a first write to a page of fresh memory costs: a page fault a page,
# or the pages faulted in by one system call (bench/pagefault.c;
# docs/bench.md "Page faults"). Not a test: prints numbers.
#
#   bash bench/pagefault.sh [PAGES [ROUNDS]]     (BUILD=build, CPU=1)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
mkdir -p "$BUILD/bench"
cc -O2 -Wall -Ibench -o "$BUILD/bench/pagefault" bench/pagefault.c
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c "${CPU:-1}" "$BUILD/bench/pagefault" "$@"
