# libfaketime 0.9.10 (Debian source package faketime): an LD_PRELOAD
# library that finds the system library's own time, stat, sleep, timer
# and pthread_cond functions with dlsym(RTLD_NEXT, ...) (and dlvsym for
# versioned ones) and calls them through those pointers from every
# interposed function, from its constructor on. Built: the library
# (libfaketime.so.1; plain src/Makefile with -Werror dropped: it is
# written for gcc) and the test programs (timetest, the snippet runners).
# Tests: timetest with a frozen date (a kCFI program, kCFI preload); the
# upstream functests that run the system's uninstrumented /bin/date under
# the preload (null, true, walkone; test_exclude_mono needs perl's
# Time::HiRes CLOCK_MONOTONIC and is left out); test_variable_data (the
# snippet programs with FAKETIME, FAKERANDOM_SEED, FAKETIME_FAKEPID
# changing between runs). The functests print the real time once: masked.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
PKG=faketime
TESTS=(timetest functests variable-data)
QUICK_TESTS=(timetest functests)
BENCH=(functests)
PROBE="test/timetest"

build_prog() {
	# Debian's flags (debian/rules), -Werror dropped (written for gcc).
	local f="$CFLAGS -DMULTI_ARCH -DFAKE_RANDOM -DFAKE_PID -Wno-error -Wno-unknown-warning-option" runs
	runs=$(cd test && for s in snippets/*.variable; do
		s=${s##*/}; echo "run_${s%.variable}"; done)
	make -C src CC="$CC" FAKETIME_COMPILE_CFLAGS="$f" \
		libfaketime.so.1 libfaketimeMT.so.1 &&
	# shellcheck disable=SC2086  # a list of targets
	make -C test CC="$CC" FAKETIME_COMPILE_CFLAGS="$f" timetest $runs
}

filter_output() {
	sed -E 's/^(out=0 \(\) ref=)[0-9]+/\1<now>/'
}

run_test() {
	local t=$1 tree=$2 s
	# The tests name ../src/libfaketime.so.1 and write next to themselves.
	mkdir w && cp -a "$tree/test" w/test && ln -s "$tree/src" w/src &&
	cd w/test || return 1
	case $t in
	timetest)
		FAKETIME="2003-01-01 10:00:05" LD_PRELOAD=../src/libfaketime.so.1 ./timetest ;;
	functests)
		mkdir sel &&
		cp functests/common.inc functests/test_null.sh functests/test_true.sh \
			functests/test_walkone.sh sel/ &&
		./testframe.sh sel ;;
	variable-data)
		# Every snippet but syscall_*: Debian does not build
		# INTERCEPT_SYSCALL (neither do we).
		# shellcheck disable=SC2046  # the snippet names
		./test_variable_data.sh $(for s in snippets/*.variable; do
			s=${s##*/}; s=${s%.variable}
			[ "${s#syscall}" = "$s" ] && echo "$s"; done) ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}
