# SQLite 3.40 (Debian source package sqlite3): the upstream Makefile's
# speedtest1 (its benchmark program, with --verify: a hash of every query
# result) and fuzzcheck (its fuzz-regression driver, run over the
# test/fuzzdata*.db corpora shipped in the source, as `make fuzztest` does).
# The unix VFS keeps a table of libc syscall pointers (open, read, unlink,
# ...): the case the libc veneers exist for. Needs tclsh for sqlite3.c.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
PKG=sqlite3
TESTS=(speedtest1 speedtest1-threads speedtest1-cte speedtest1-fp speedtest1-orm
       fuzzdata1 fuzzdata2 fuzzdata3 fuzzdata4 fuzzdata5 fuzzdata6 fuzzdata7 fuzzdata8)
QUICK_TESTS=(speedtest1-quick speedtest1-threads)
BENCH=(speedtest1 fuzzdata4)
ICOUNT=(speedtest1-quick)
PROBE="speedtest1 --help"

build_prog() {
	command -v tclsh >/dev/null || {
		echo "sqlite3 needs tclsh to generate sqlite3.c: apt-get install tcl"; return 1; }
	./configure CC="$CC" CFLAGS="$CFLAGS" --disable-tcl --disable-shared \
		--disable-readline &&
	make sqlite3.c &&
	# --quick (CI) builds speedtest1 only: each program compiles all of
	# sqlite3.c (8 MB) once more.
	if [ "${QUICK:-0}" = 1 ]; then make speedtest1
	else make -j"$JOBS" speedtest1 fuzzcheck; fi
}

run_test() {
	local t=$1 tree=$2 st=(--verify --nomemstat)
	case $t in
	speedtest1)         "$tree/speedtest1" "${st[@]}" --size 25 t.db ;;
	speedtest1-quick)   "$tree/speedtest1" "${st[@]}" --size 5 t.db ;;
	speedtest1-threads) "$tree/speedtest1" "${st[@]}" --size 10 --threads 2 --memdb ;;
	speedtest1-cte)     "$tree/speedtest1" "${st[@]}" --size 10 --testset cte t.db ;;
	speedtest1-fp)      "$tree/speedtest1" "${st[@]}" --size 10 --testset fp t.db ;;
	speedtest1-orm)     "$tree/speedtest1" "${st[@]}" --size 10 --testset orm t.db ;;
	fuzzdata*)          "$tree/fuzzcheck" "$tree/test/$t.db" ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}

# Drop timings (speedtest1 "   0.123s", fuzzcheck "... N ms").
filter_output() {
	sed -E 's/ *[0-9]+\.[0-9]+s$/ <t>s/; s/[0-9]+ ?ms\b/<t>ms/g; s/in [0-9.]+ seconds/in <t> seconds/'
}
