# bzip2 1.0.8: upstream Makefile (libbz2.a, bzip2, bzip2recover) and its own
# `make test` (compress/decompress the shipped samples at -1..-3 and compare
# with the shipped references), plus round trips of a generated corpus.
# libbz2 calls its allocator through bzalloc/bzfree pointers in bz_stream.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
PKG=bzip2
TESTS=(make-test roundtrip-1 roundtrip-9 recover)
QUICK_TESTS=(make-test roundtrip-9 recover)
BENCH=(roundtrip-9)
ICOUNT=(roundtrip-small)
PROBE="bzip2 --help"

build_prog() {
	make -j"$JOBS" CC="$CC" CFLAGS="$CFLAGS -D_FILE_OFFSET_BITS=64" \
		libbz2.a bzip2 bzip2recover
}

# ~6 MB of text built from the package's own files, deterministic.
corpus() {
	local tree=$1 i
	for i in 1 2 3 4 5 6 7 8; do
		cat "$tree"/*.c "$tree"/*.h "$tree/manual.html" "$tree/bzip2.txt" "$tree/words3"
		cat "$tree/sample1.ref"
	done
}

run_test() {
	local t=$1 tree=$2
	case $t in
	make-test)
		# `make test` runs in the tree; work on a copy of what it reads.
		cp "$tree"/Makefile "$tree"/bzip2 "$tree"/words* "$tree"/sample* . &&
		make -s -o bzip2 test CC=false ;;
	roundtrip-small)
		corpus "$tree" | head -c 1000000 >in
		"$tree/bzip2" -9 -c <in >in.bz2 && "$tree/bzip2" -d -c <in.bz2 | cmp - in ;;
	roundtrip-1|roundtrip-9)
		corpus "$tree" >in
		"$tree/bzip2" -${t#roundtrip-} -c <in >in.bz2 &&
		"$tree/bzip2" -d -c <in.bz2 >out && cmp in out &&
		"$tree/bzip2" -t in.bz2 &&
		md5sum <in.bz2 ;;
	recover)
		corpus "$tree" | head -c 3000000 >in
		"$tree/bzip2" -1 -c <in >in.bz2 &&
		# Damage one block: bzip2recover writes the intact blocks out.
		printf 'XXXX' | dd of=in.bz2 bs=1 seek=200000 conv=notrunc 2>/dev/null &&
		{ "$tree/bzip2" -t in.bz2 2>&1; echo "test rc=$?"; } &&
		"$tree/bzip2recover" in.bz2 2>&1 &&
		ls rec*in.bz2 | while read -r f; do
			"$tree/bzip2" -d -c "$f" | md5sum; done ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}


