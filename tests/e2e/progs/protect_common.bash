# Shared helpers of tests/e2e/protect_*.sh (sourced, not a test itself):
# builds protect_prog (dynamic and -static-fineibt), the kCFI library it
# dlopens after start-up, and the outside observer protect_scan, once,
# under $BUILD/e2e/protect/.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
PR_SRC=$ROOT/tests/e2e/progs
PR_OUT=$ROOT/$BUILD/e2e/protect
FCC=$ROOT/$BUILD/fineibt-cc
mkdir -p "$PR_OUT"
unset FINEIBT_CFI FINEIBT_VERBOSE FINEIBT_SEQ LD_PRELOAD
# fi_with_sets: each test's modes run in both sequence sets
. "$ROOT/tests/e2e/progs/sets.bash"
# The test build of the runtime (Makefile, TESTLIB): the shipped one plus
# the test-only fineibt_debug_object (tests/lib/rtdebug.c). Run a program
# against it with: pr_run NAME CFI env "$PR_DEBUG_ENV" PROG... (PROG and
# LIB name the runtime by soname, FINEIBT_CC_RUNPATH=1, so that
# LD_LIBRARY_PATH chooses the copy: the default absolute path would not).
PR_TESTLIB=$ROOT/$BUILD/testlib
PR_DEBUG_ENV=LD_LIBRARY_PATH=$PR_TESTLIB

pr_pass() { echo "PASS: $1"; }
pr_fail() { echo "FAIL: $1: $2"; }

# pr_fresh OUT SRC...: OUT is newer than the runtime, the driver and SRC.
pr_fresh() {
	local out=$1 f
	shift
	[ -e "$out" ] || return 1
	for f in "$FCC" "$ROOT/$BUILD/libfineibt.so" "$ROOT/$BUILD/libfineibt.a" \
		 "$ROOT/$BUILD/libfineibt_crt.a" "$@"; do
		[ "$out" -nt "$f" ] || return 1
	done
}

pr_build() {
	local p=$PR_SRC/protect_prog.c l=$PR_SRC/protect_lib.c s=$PR_SRC/protect_scan.c
	PROG=$PR_OUT/protect_prog
	PROG_STATIC=$PR_OUT/protect_prog_static
	LIB=$PR_OUT/libfi_protect.so
	SCAN=$PR_OUT/protect_scan
	{ pr_fresh "$PROG" "$p" ||
	  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -Wall -I"$ROOT/include" "$p" -o "$PROG"; } &&
	{ pr_fresh "$PROG_STATIC" "$p" "$PR_TESTLIB/rtdebug.o" ||
	  "$FCC" -O2 -Wall -static-fineibt -DPR_DEBUG_LINKED=1 -I"$ROOT/include" "$p" \
		"$PR_TESTLIB/rtdebug.o" -o "$PROG_STATIC"; } &&
	{ pr_fresh "$LIB" "$l" ||
	  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -fPIC -shared "$l" -o "$LIB"; } &&
	{ pr_fresh "$SCAN" "$s" ||
	  clang-22 -O1 -Wall -D_GNU_SOURCE -I"$ROOT/include" $(printf -- '-I%s ' "$ROOT"/src/*/) "$s" \
		"$ROOT/$BUILD/libfineibt.a" -ldl -lpthread -o "$SCAN"; }
}

# pr_run NAME CFI CMD...: sets PR_RC, PR_OUT_TXT (stdout), PR_ERR_TXT.
pr_run() {
	local name=$1 cfi=$2
	shift 2
	local o=$PR_OUT/$name.out e=$PR_OUT/$name.err
	# The group's own stderr hides bash's "Segmentation fault" notice.
	{ FINEIBT_CFI=$cfi "$@" >"$o" 2>"$e" </dev/null; PR_RC=$?; } 2>/dev/null
	PR_OUT_TXT=$(cat "$o")
	PR_ERR_TXT=$(cat "$e")
}

PR_REPORT_RE='^fineibt: CFI failure at [^ ]+ \(target: '
