#!/usr/bin/env bash
# Build the kCFI test programs into OUTDIR (see README for the list).
# Usage: tests/progs/build.sh OUTDIR
# Quiet on success; rebuilds only when a source or this script is newer.
set -eu
out=${1:?usage: build.sh OUTDIR}
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

CC=${CC:-clang-22}
LD=$(command -v ld.lld-22 || command -v ld.lld)
STRIP=${STRIP:-llvm-strip-22}
KCFI_BASE="-fsanitize=kcfi -fpatchable-function-entry=11,11 -falign-functions=16
 -fcf-protection=branch -mretpoline-external-thunk -mindirect-branch-cs-prefix"
KCFI="$KCFI_BASE -fsanitize-kcfi-arity"
COMMON="-O2 -g -Wall -Werror -I$src"
LDFLAGS="--ld-path=$LD"

# One build at a time per OUTDIR (tests may run concurrently).
exec 9>"$out/.lock"
flock 9
# Skip the work when every output is newer than every input.
stamp=$out/.built
if [ -f "$stamp" ]; then
	stale=0
	for f in "$src"/*.c "$src"/*.S "$src"/*.h "$src/../../src/seq/bhi.S" "$src/../../src/seq/thunks.S" "$0"; do
		[ "$f" -nt "$stamp" ] && stale=1
	done
	[ "$stale" = 0 ] && exit 0
fi

cd "$out"
# (c) the kCFI shared object, plain and RELR-packed
$CC $COMMON $KCFI -fPIC -shared -Wl,-soname,libfiprog.so $LDFLAGS \
	-o libfiprog.so "$src/dso.c" "$src/thunk.S"
$CC $COMMON $KCFI -fPIC -shared -Wl,-soname,libfiprog_relr.so $LDFLAGS \
	-Wl,-z,pack-relative-relocs -o libfiprog_relr.so "$src/dso.c" "$src/thunk.S"

prog_srcs=("$src/prog.c" "$src/naked.S" "$src/thunk.S")
rpath='-Wl,-rpath,$ORIGIN'
# (a) PIE and (b) non-PIE, both using libfiprog.so
$CC $COMMON $KCFI -DPROG_DSO -fPIE -pie $LDFLAGS $rpath -o prog_pie \
	"${prog_srcs[@]}" -L. -lfiprog
$CC $COMMON $KCFI -DPROG_DSO -fno-pic -no-pie $LDFLAGS $rpath -o prog_nopie \
	"${prog_srcs[@]}" -L. -lfiprog
# RELR-packed PIE using the RELR DSO
$CC $COMMON $KCFI -DPROG_DSO -fPIE -pie $LDFLAGS $rpath \
	-Wl,-z,pack-relative-relocs -o prog_relr "${prog_srcs[@]}" -L. -lfiprog_relr
# kCFI without arity (every preamble uses eax), PIE and non-PIE, no DSO
$CC $COMMON $KCFI_BASE -fPIE -pie $LDFLAGS -o prog_noarity "${prog_srcs[@]}"
$CC $COMMON $KCFI_BASE -fno-pic -no-pie $LDFLAGS -o prog_noarity_nopie \
	"${prog_srcs[@]}"
# PIE with the project's __bhi_args stubs (src/seq/bhi.S) linked in, so that
# `fineibt patch --cfi=fineibt,bhi` has stubs in reach; no DSO
$CC $COMMON $KCFI -fPIE -pie $LDFLAGS -o prog_bhi "${prog_srcs[@]}" \
	"$src/../../src/seq/bhi.S"
# (d) no kCFI at all
$CC $COMMON -fPIE -pie $LDFLAGS -o prog_plain "$src/prog.c" "$src/naked.S"
# stripped copy of the PIE (no .symtab, no __cfi_ symbols)
$STRIP -o prog_stripped prog_pie
touch "$stamp"
