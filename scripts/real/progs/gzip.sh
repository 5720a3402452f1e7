# GNU gzip 1.12 (Debian source package gzip): code from 1992 in the
# style of its time (global state, one `work` function pointer set to
# zip/unzip/unpack/unlzw/unlzh/copy by the detected format and called
# per file, `read_buf` through a pointer, the inflate Huffman tables),
# gnulib-based, ./configure. Its own test suite: `make -C tests check`
# (26 shell scripts: gzip's options and formats, corrupted and crafted
# inputs (hufts, helin-segv, unpack-invalid), and the zgrep/zdiff/znew
# scripts running the built gzip), plus compression round trips of a
# generated corpus for timing.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
# shellcheck source=scripts/real/automake.sh
. "$(dirname "${BASH_SOURCE[0]}")/../automake.sh"
PKG=gzip
TESTS=(check roundtrip)
QUICK_TESTS=(check)
BENCH=(roundtrip)
PROBE="gzip --version"

build_prog() {
	./configure CC="$CC" CFLAGS="$CFLAGS" &&
	make -j"$JOBS"
}

run_test() {
	local t=$1 tree=$2 i
	case $t in
	check) automake_check "$tree/tests" ;;
	roundtrip)
		# ~6 MB of the package's own sources, deterministic; -1, -6
		# and -9 round trips through pipes, then -l and -t.
		for i in $(seq 1 12); do cat "$tree"/*.c "$tree"/*.h "$tree"/lib/*.c; done >in &&
		for i in 1 6 9; do
			"$tree/gzip" -n -"$i" <in >in.$i.gz &&
			"$tree/gzip" -d <in.$i.gz | cmp - in &&
			md5sum <in.$i.gz || return 1
		done &&
		"$tree/gzip" -l in.9.gz | sed 's/  */ /g' &&
		"$tree/gzip" -t in.1.gz in.6.gz in.9.gz ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}
