# GNU ed 1.19 (Debian source package ed): an old-style GNU program (its
# own hand-written configure, a line editor from the 1980s kept alive, C
# without a library layer) with its own test suite: testsuite/check.sh
# runs ~115 scripts (editing scripts whose output must match the .r files,
# error scripts that must fail, piped and with --loose-exit-status). It
# defines functions with empty parentheses (`bool interactive()`), the
# old-style C of issue 14 item 1. Plus a scripted edit of a large file
# (global substitutions, moves, joins, undo) for timing.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
PKG=ed
TESTS=(check big-edit)
QUICK_TESTS=(check)
BENCH=(big-edit)
PROBE="ed --version"

build_prog() {
	./configure CC="$CC" CFLAGS="$CFLAGS" &&
	make -j"$JOBS"
}

run_test() {
	local t=$1 tree=$2 i
	case $t in
	check)
		# check.sh runs $PWD/ed and works in $PWD/tmp.
		cp "$tree/ed" ed &&
		sh "$tree/testsuite/check.sh" "$tree/testsuite" 1.19 ;;
	big-edit)
		# ~40000 lines from the package's own sources, deterministic.
		for i in 1 2 3 4 5 6 7 8 9 10; do cat "$tree"/*.c "$tree"/*.h; done >in
		printf '%s\n' 'g/int/s//long/g' 'g/^$/d' '1,200m$' 'g/static/j' \
			'v/[a-z]/d' 'u' 'g/\(char\) \*/s//\1 const */' ',s/[0-9]\{2,\}/N/g' \
			'w out' 'q' | "$tree/ed" -s in &&
		wc -l out && md5sum out ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}
