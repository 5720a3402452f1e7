# GNU m4 1.4.19 (Debian source package m4): gnulib-based, ./configure, a
# macro processor whose builtins are dispatched through a table of
# function pointers (builtin_tab in src/builtin.c) and whose obstacks call
# their allocator through pointers. Its own tests: the ~240 examples of the
# manual (checks/check-them, output and exit status compared) and gnulib's
# unit tests (tests/, ~235 programs), plus macro expansion of a generated
# file for timing.
# checks/198.sysval is left out: it kills its own shell with `kill -9 $$`
# and expects the status the manual shows; on this machine it fails the
# same way with the plain clang-22 build (the shell's "Killed" message),
# so it says nothing about CFI.
# shellcheck disable=SC2034  # read by run.sh, which sources this file
# shellcheck source=scripts/real/automake.sh
. "$(dirname "${BASH_SOURCE[0]}")/../automake.sh"
PKG=m4
TESTS=(checks gnulib expand)
QUICK_TESTS=(checks)
BENCH=(expand)
PROBE="src/m4 --version"

build_prog() {
	./configure CC="$CC" CFLAGS="$CFLAGS" --disable-nls &&
	make -j"$JOBS" &&
	make -j"$JOBS" -C tests check TESTS=
}

run_test() {
	local t=$1 tree=$2 i f checks=()
	case $t in
	checks)
		for f in "$tree"/checks/[0-9][0-9][0-9].*; do
			case $f in */198.sysval) ;; *) checks+=("$f") ;; esac
		done
		# check-them works in a scratch dir under $PWD (the run's own).
		sh "$tree/checks/check-them" -I "$tree/examples" \
			-m "$tree/src/m4" "${checks[@]}" "$tree/checks/stackovf.test" ;;
	gnulib) automake_check "$tree/tests" ;;
	expand)
		# Recursive macros, string builtins and diversions over a
		# generated input: deterministic output, checksummed.
		{
			echo 'define(`fib'"'"', `ifelse(eval($1 < 2), 1, $1, `eval(fib(decr($1)) + fib(eval($1 - 2)))'"'"')'"'"')dnl'
			echo 'define(`up'"'"', `translit(`$1'"'"', `a-z'"'"', `A-Z'"'"')'"'"')dnl'
			for i in $(seq 1 400); do
				echo "fib(12) up(\`line $i of the input') substr(\`abcdefghij', eval($i % 7), 3) index(\`needle in a haystack', \`hay') len(\`$i')"
				echo "divert(eval($i % 3))format(\`%5d|%-8s|', $i, \`m4')divert"
			done
			echo 'undivert'
		} >in.m4 &&
		"$tree/src/m4" in.m4 >out && wc -l out && md5sum <out ;;
	*) echo "unknown test $t"; return 2 ;;
	esac
}
