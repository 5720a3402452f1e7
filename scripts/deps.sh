#!/usr/bin/env bash
# Install what building and testing fineibt needs on Debian 12.
# Idempotent: prints nothing and exits 0 when everything is already there.
set -u

need_cmds=(clang-22 ld.lld-22 llvm-objdump-22 llvm-readelf-22 make cc python3 setpriv
	   cmake pkg-config autoreconf libtoolize  # tests/e2e/buildsys.sh
	   dpkg-source tclsh  # tests/e2e/real_*.sh: apt-get source; sqlite3.c
	   strace)  # rt_startup_io, compat_dlsym, trap_* count opens and SIGILLs
pkgs=(clang-22 lld-22 llvm-22 make gcc python3 util-linux libc6-dev
      cmake pkgconf autoconf automake libtool dpkg-dev tcl strace)

missing=0
for c in "${need_cmds[@]}"; do
	command -v "$c" >/dev/null 2>&1 || missing=1
done
# the compiler-rt builtins are needed by fuzzing/sanitizer builds
[ -d /usr/lib/llvm-22/lib/clang ] || missing=1
[ "$missing" = 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing build tools (${pkgs[*]}); run as root or install them: apt-get install ${pkgs[*]}" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: no apt-get here; install clang-22, lld-22 and llvm-22 (LLVM >= 21) by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${pkgs[@]}" libclang-rt-22-dev; } >"$log" 2>&1; then
	echo "deps.sh: apt-get could not install ${pkgs[*]}; last lines of its output:" >&2
	tail -n 5 "$log" >&2
	rm -f "$log"
	exit 1
fi
rm -f "$log"
for c in "${need_cmds[@]}"; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "deps.sh: '$c' still missing after installing ${pkgs[*]}" >&2
		exit 1
	fi
done
exit 0
