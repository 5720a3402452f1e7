#!/usr/bin/env bash
# scripts/deps.sh names exactly the packages that are missing, for `make`
# (build) or `make check` (test), and installs nothing without root.
# Each case runs it without privileges, with a PATH of stand-ins for
# every tool (deps.sh only asks whether each is there) minus the ones
# taken away.
set -u
ROOT=${FINEIBT_ROOT:-$PWD}
# Under /tmp, not the work tree: the unprivileged user must reach it.
OUT=$(mktemp -d /tmp/fineibt-deps.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$OUT/bin"
cp "$ROOT/scripts/deps.sh" "$OUT/deps.sh"
chmod 755 "$OUT" "$OUT/bin" "$OUT/deps.sh"
for c in clang-22 ld.lld-22 llvm-objdump-22 llvm-readelf-22 llvm-nm-22 \
	 llvm-objcopy-22 llvm-mc-22 make cc python3 setpriv cmake pkg-config \
	 autoreconf aclocal libtoolize dpkg-source tclsh strace; do
	printf '#!/bin/sh\nexit 0\n' >"$OUT/bin/$c"
	chmod 755 "$OUT/bin/$c"
done
for c in bash id; do ln -s "$(command -v "$c")" "$OUT/bin/$c"; done

# case NAME WHAT WANT REMOVED...: deps.sh WHAT without REMOVED in PATH
case_() {
	local name=$1 what=$2 want=$3 err rc
	shift 3
	for c in "$@"; do mv "$OUT/bin/$c" "$OUT/bin/.$c"; done
	err=$(cd "$OUT" && env -i PATH="$OUT/bin" "$SETPRIV" --reuid=65534 \
		--regid=65534 --clear-groups --inh-caps=-all \
		"$OUT/bin/bash" "$OUT/deps.sh" $what 2>&1)
	rc=$?
	for c in "$@"; do mv "$OUT/bin/.$c" "$OUT/bin/$c"; done
	if [ "$rc" = "${want%%:*}" ] && [ "$err" = "${want#*:}" ]; then
		echo "PASS: $name"
	else
		echo "FAIL: $name: rc=$rc: $err"
	fi
}
SETPRIV=$(command -v setpriv)
if [ "$(id -u)" != 0 ] || [ -z "$SETPRIV" ]; then
	echo "PASS: deps (skipped: needs root and setpriv to drop privileges)"
	exit 0
fi
case_ deps-all-there build "0:"
case_ deps-all-there-test test "0:"
case_ deps-build-names-one build \
	"1:deps.sh: missing for 'make': llvm-22 (Debian packages); install them as root: apt-get install llvm-22" \
	llvm-nm-22 llvm-objcopy-22
case_ deps-build-ignores-test-tools build "0:" strace tclsh cmake dpkg-source
case_ deps-test-names-test-tools test \
	"1:deps.sh: missing for 'make check': tcl strace (Debian packages); install them as root: apt-get install tcl strace" \
	strace tclsh
case_ deps-bad-argument frob "2:deps.sh: unknown argument 'frob'; want build or test"
exit 0
