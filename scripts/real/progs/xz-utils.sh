# XZ Utils 5.4.1 (Debian source package xz-utils): ./configure (static
# liblzma), xz, and the upstream `make check` (tests/: unit tests of
# liblzma's API, test_files.sh over the shipped good/bad .xz/.lzma files,
# test_compress.sh with every filter chain, test_scripts.sh). liblzma chains
# its coders through code/end/memconfig function pointers in lzma_next_coder.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
# shellcheck source=scripts/real/automake.sh
. "$(dirname "${BASH_SOURCE[0]}")/../automake.sh"
PKG=xz-utils
TESTS=(check compress-9)
QUICK_TESTS=(check)
BENCH=(compress-9)
PROBE="src/xz/xz --version"

build_prog() {
	./configure CC="$CC" CFLAGS="$CFLAGS" --disable-shared --disable-nls \
		--disable-doc --disable-scripts --disable-lzmadec --disable-lzmainfo &&
	make -j"$JOBS" &&
	make -j"$JOBS" -C tests check TESTS=
}

run_test() {
	local t=$1 tree=$2 i
	case $t in
	check) automake_check "$tree/tests" ;;
	compress-9)
		for i in 1 2 3; do cat "$tree"/src/liblzma/*/*.c; done >in
		"$tree/src/xz/xz" -9 -c in >in.xz && "$tree/src/xz/xz" -d -c in.xz | cmp - in &&
		md5sum <in.xz ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}
