#!/usr/bin/env bash
# Cost of one dlsym(RTLD_NEXT) by a kCFI library loaded with dlopen
# (docs/compat.md, "Loaded by dlopen": the lookup the link-map walk does
# not answer, served through the module's RTLD_NEXT entry): callgrind
# instruction counts of bench/rtld_next.c, per lookup = (Ir(N2) -
# Ir(N1)) / (N2 - N1), in each mode, and the part spent in the runtime's
# fi_next_veneer (--toggle-collect: the walk, the entry, the veneer). Not a test: prints numbers.
# Usage: bench/rtld_next.sh [N1=200] [N2=2200]   (BUILD=build)
set -eu
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build}
n1=${1:-200}
n2=${2:-2200}
out=$BUILD/bench/rtld_next
mkdir -p "$out"
"$BUILD/fineibt-cc" -O2 -o "$out/main" bench/rtld_next.c -ldl
"$BUILD/fineibt-cc" -O2 -fPIC -shared -DNEXT_LIB -o "$out/libnext.so" bench/rtld_next.c -ldl
bench_strip_lib "$BUILD/libfineibt.so" "$out/libfineibt.so.0"

ir() {	# ir CFI ROUNDS [CALLGRIND OPTIONS...]
	local m=$1 n=$2
	shift 2
	LD_LIBRARY_PATH=$out FINEIBT_CFI=$m callgrind_ir "$@" "$out/main" "$out/libnext.so" "$n"
}
per() {	# per CFI [CALLGRIND OPTIONS...]
	local m=$1 a b
	shift
	a=$(ir "$m" "$n1" "$@")
	b=$(ir "$m" "$n2" "$@")
	echo $(( (b - a) / (n2 - n1) ))
}
printf '%-22s %14s %16s\n' mode "Ir/lookup" "in fi_next_veneer"
for m in off kcfi fineibt auto; do
	printf '%-22s %14s %16s\n' "$m" "$(per "$m")" \
		"$(per "$m" --toggle-collect=fi_next_veneer)"
done
