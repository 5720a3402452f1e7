# PCRE2 10.42 (Debian source package pcre2): ./configure (8-bit library,
# static, no JIT: JIT code is generated at run time and carries no kCFI
# preamble), then the upstream RunTest (pcre2test over testdata/, ~20
# test files) and RunGrepTest (pcre2grep). The library calls its memory
# manager, callouts and substitute callouts through pointers; pcre2test
# installs its own for each of them.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
PKG=pcre2
TESTS=(RunTest RunGrepTest)
QUICK_TESTS=(RunTest)
BENCH=(RunTest)
# RunGrepTest's script-callout test races pcre2grep's buffered output with
# the /bin/echo it forks (line order differs about 1 run in 6, plain clang
# build included): up to 3 tries.
FLAKY=(RunGrepTest)
PROBE="pcre2test -C"

build_prog() {
	./configure CC="$CC" CFLAGS="$CFLAGS" --disable-shared --disable-jit &&
	make -j"$JOBS" pcre2test pcre2grep
}

run_test() {
	local t=$1 tree=$2
	ln -s "$tree/pcre2test" pcre2test
	ln -s "$tree/pcre2grep" pcre2grep
	case $t in
	RunTest)     srcdir=$tree "$tree/RunTest" ;;
	RunGrepTest) srcdir=$tree "$tree/RunGrepTest" ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}
