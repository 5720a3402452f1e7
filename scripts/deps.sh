#!/usr/bin/env bash
# Install what fineibt needs on Debian 12, by purpose:
#   deps.sh build   what `make` needs (the compiler, linker and LLVM tools
#                   fineibt-cc runs; make; the C library headers)
#   deps.sh test    the above plus what `make check` needs (sanitizer
#                   runtimes, strace, the build systems and sources of the
#                   end-to-end tests)
#   deps.sh         both (CI: .ci/run)
# Quiet and quick when everything is there. Otherwise, as root with
# apt-get, installs exactly the missing packages; else names them and
# exits 1.
set -u
what=${1:-test}

# "command package" pairs; a command starting with "-" is a file (a glob).
build=(
	"clang-22 clang-22" "ld.lld-22 lld-22" "llvm-objdump-22 llvm-22"
	"llvm-readelf-22 llvm-22" "llvm-nm-22 llvm-22" "llvm-objcopy-22 llvm-22"
	"make make" "-/usr/include/stdio.h libc6-dev"
)
test=(
	"cc gcc" "python3 python3" "setpriv util-linux"
	"llvm-mc-22 llvm-22"					# tests/e2e/insn_oracle.sh
	"-/usr/lib/llvm-22/lib/clang/*/lib/linux/libclang_rt.asan-x86_64.a libclang-rt-22-dev"
	# (sanitizers: compat_san, make check SAN=1; fuzzers)
	"cmake cmake" "pkg-config pkgconf" "autoreconf autoconf"
	"aclocal automake" "libtoolize libtool"			# tests/e2e/buildsys.sh
	"dpkg-source dpkg-dev" "tclsh tcl"			# tests/e2e/real_*.sh
	"strace strace"		# rt_startup_io, compat_dlsym, trap_*: count calls
)
case $what in
build) want=("${build[@]}") ;;
test) want=("${build[@]}" "${test[@]}") ;;
*) echo "deps.sh: unknown argument '$what'; want build or test" >&2; exit 2 ;;
esac

have() {
	case $1 in
	-*) compgen -G "${1#-}" >/dev/null ;;
	*) command -v "$1" >/dev/null 2>&1 ;;
	esac
}

# The packages of the missing commands, each once, in order.
missing() {
	local p seen=" "
	for p in "${want[@]}"; do
		have "${p%% *}" && continue
		[[ $seen == *" ${p##* } "* ]] && continue
		seen+="${p##* } "
		printf '%s\n' "${p##* }"
	done
}

mapfile -t pkgs < <(missing)
[ "${#pkgs[@]}" = 0 ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	[ "$what" = build ] && for=make || for="make check"
	echo "deps.sh: missing for '$for': ${pkgs[*]} (Debian packages);" \
	     "install them as root: apt-get install ${pkgs[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${pkgs[@]}"; } >"$log" 2>&1; then
	echo "deps.sh: apt-get could not install ${pkgs[*]}; last lines of its output:" >&2
	tail -n 5 "$log" >&2
	rm -f "$log"
	exit 1
fi
rm -f "$log"
mapfile -t pkgs < <(missing)
if [ "${#pkgs[@]}" != 0 ]; then
	echo "deps.sh: still missing after apt-get install: ${pkgs[*]}" >&2
	exit 1
fi
exit 0
