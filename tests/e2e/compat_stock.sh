#!/usr/bin/env bash
# compat_stock: kCFI modules built by clang-22 with -fsanitize=kcfi alone
# (no fineibt-cc flags: the hash at func-4, checks through any register;
# docs/compat.md, "Stock kCFI modules"):
#  - a stock program with libc pointers (strlen, strcmp, strcmp called by
#    libc's qsort), a table of callbacks and a type-confused call, under
#    `fineibt run`: every mode completes, with no SIGILL taken on legal
#    calls; the confused call is stopped (fatal) or reported and continued
#    (warn) with its symbols, call site line and target prototype;
#  - its &strcmp is its typed veneer, not libc's function (pointer
#    equality, as documented); a veneer accepts its own type only;
#  - the same as a stock library dlopen'ed by a fineibt-cc program (types
#    hashed alike: an exact program with an exact library, the default
#    generalized program with a generalized library) and by a stock
#    program under `fineibt run`;
#  - the v6.18 set: with ENDBRs (-fcf-protection=branch) it runs; without,
#    one line names the flag;
#  - layouts the bridge refuses (stripped, -Os) say why, in the runtime's
#    warning and in `fineibt inspect`.
# On the tree before the bridge every checking mode died at the first
# libc call through a pointer (rc 132, report without symbols).
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
. "$ROOT/tests/e2e/progs/sets.bash"
SRC=$ROOT/tests/e2e/progs
OUT=$ROOT/$BUILD/e2e/compat_stock
FIBT=$ROOT/$BUILD/fineibt
FCC=$ROOT/$BUILD/fineibt-cc
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD FINEIBT_VERBOSE FINEIBT_SEQ

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
check() {	# check NAME WHY CMD...
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
run() {		# run CFI PROG ARGS...: RC, OUTT, ERRT
	local cfi=$1
	shift
	OUTT=$(FINEIBT_CFI=$cfi "$@" 2>"$OUT/err")
	RC=$?
	# built without -fsanitize-kcfi-arity: bhi is ignored, with one line
	ERRT=$(grep -v "^fineibt: ignoring 'bhi': needs kCFI arity" "$OUT/err")
}

K="-O2 -g -fsanitize=kcfi"
if ! { clang-22 $K "$SRC/compat_stock_main.c" -o "$OUT/main" &&
       clang-22 $K -fcf-protection=branch -fsanitize-kcfi-arity \
		"$SRC/compat_stock_main.c" -o "$OUT/main_ibt" &&
       clang-22 $K -s "$SRC/compat_stock_main.c" -o "$OUT/main_stripped" &&
       clang-22 -Os -g -fsanitize=kcfi "$SRC/compat_stock_main.c" -o "$OUT/main_os" &&
       clang-22 $K -fPIC -shared "$SRC/compat_stock_lib.c" -o "$OUT/libexact.so" &&
       clang-22 $K -fPIC -shared -fsanitize-cfi-icall-generalize-pointers \
		"$SRC/compat_stock_lib.c" -o "$OUT/libgen.so" &&
       "$FCC" -O2 -g --fineibt-exact "$SRC/compat_stock_host.c" -o "$OUT/host_exact" &&
       "$FCC" -O2 -g "$SRC/compat_stock_host.c" -o "$OUT/host_gen" &&
       clang-22 $K "$SRC/compat_stock_host.c" -o "$OUT/host_stock"; } >"$OUT/build.log" 2>&1; then
	fail compat_stock_build "$(tail -n 3 "$OUT/build.log")"
	exit 0
fi

WANT="sum 3507 first apple apple"
MODES="off kcfi kcfi,norand fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto"
# What a symbolised report of the confused call says.
rep_ok() {	# rep_ok ERRTEXT CALLER_RE
	grep -qE "^fineibt: CFI failure at $2\+0x[0-9a-f]+ \(target: add\+0x0; expected type: 0x[0-9a-f]{8}; mode: " <<<"$1" &&
	grep -qE '^fineibt:   call site: (.*/)?compat_stock_(main|lib)\.c:[0-9]+ ' <<<"$1" &&
	grep -q '^fineibt:   target: int add(int, int)' <<<"$1"
}

# ---- the stock program under `fineibt run`, every mode
for m in $MODES; do
	run "$m" "$FIBT" run -- "$OUT/main"
	check "program[$m]" "rc=$RC out='$OUTT' err='$ERRT'" \
		test "$RC" = 0 -a "$OUTT" = "$WANT" -a -z "$ERRT"
	[ "$m" = off ] && continue
	run "$m" "$FIBT" run -- "$OUT/main" confuse
	check "program-confused[$m]" "rc=$RC out='$OUTT' err='$ERRT'" \
		bash -c '[ "$1" = 132 ] && ! grep -q confused <<<"$2"' _ "$RC" "$OUTT"
	check "program-report[$m]" "err='$ERRT'" rep_ok "$ERRT" main
	run "$m,warn" "$FIBT" run -- "$OUT/main" confuse
	check "program-warn[$m]" "rc=$RC out='$OUTT' err='$ERRT'" \
		bash -c '[ "$1" = 0 ] && grep -q "^confused " <<<"$2" && grep -q "; warn)$" <<<"$3"' _ "$RC" "$OUTT" "$ERRT"
done
run off "$FIBT" run -- "$OUT/main" confuse
check "program-confused[off]" "rc=$RC out='$OUTT' err='$ERRT'" \
	bash -c '[ "$1" = 0 ] && grep -q "^confused " <<<"$2" && [ -z "$3" ]' _ "$RC" "$OUTT" "$ERRT"

# A typed veneer accepts its own type only: strlen through int (*)(int).
for m in kcfi fineibt fineibt,paranoid auto; do
	run "$m" "$FIBT" run -- "$OUT/main" veneer
	check "veneer-other-type[$m]" "rc=$RC out='$OUTT' err='$ERRT'" \
		bash -c '[ "$1" = 132 ] && ! grep -q "^veneer" <<<"$2" &&
			grep -qE "^fineibt: CFI failure at main\+0x[0-9a-f]+ \(target: typed veneer(\+0x10)? of strlen in libc\.so\.6, not instrumented; expected type" <<<"$3"' \
		_ "$RC" "$OUTT" "$ERRT"
done

# No signal on legal calls (a veneer, never a SIGILL round trip).
for m in kcfi auto; do
	FINEIBT_CFI=$m strace -f -qq -e trace=none -e signal=SIGILL \
		"$FIBT" run -- "$OUT/main" >/dev/null 2>"$OUT/strace"
	n=$(grep -c SIGILL "$OUT/strace")
	check "program-no-sigill[$m]" "$n SIGILL: $(head -3 "$OUT/strace")" test "$n" = 0
done

# Pointer equality: the module's &strcmp is its veneer (docs/compat.md).
run kcfi "$FIBT" run -- "$OUT/main" same
check "program-pointer-equality" "out='$OUTT'" grep -q '^same 0$' <<<"$OUTT"

# With ENDBRs and arity (bhi has arities to use): every mode too.
for m in $MODES; do
	run "$m" "$FIBT" run -- "$OUT/main_ibt"
	check "program-ibt[$m]" "rc=$RC out='$OUTT' err='$ERRT'" \
		test "$RC" = 0 -a "$OUTT" = "$WANT" -a -z "$ERRT"
done

# ---- the v6.18 set
for m in kcfi fineibt fineibt,paranoid auto; do
	run "$m,seq=v6.18" "$FIBT" run -- "$OUT/main_ibt"
	check "program-ibt[$m,seq=v6.18]" "rc=$RC out='$OUTT' err='$ERRT'" \
		test "$RC" = 0 -a "$OUTT" = "$WANT" -a -z "$ERRT"
done
run fineibt,paranoid,seq=v6.18 "$FIBT" run -- "$OUT/main"
check "program-noendbr[v6.18]" "rc=$RC err='$ERRT'" \
	grep -q 'main: cannot rewrite: a stock kCFI module without ENDBRs (build it with -fcf-protection=branch' <<<"$ERRT"

# ---- refused layouts: one warning naming why; inspect says the same
run auto "$FIBT" run -- "$OUT/main_stripped"
check "refused-stripped-run" "err='$ERRT'" \
	grep -q 'main_stripped: [0-9]* kCFI checks left as compiled, not rewritten: stripped: no __cfi_ symbols' <<<"$ERRT"
check "refused-stripped-inspect" "$("$FIBT" inspect "$OUT/main_stripped" 2>&1 | head -5)" \
	grep -q '^stock kCFI: .*left as compiled at load time: stripped' <<<"$("$FIBT" inspect "$OUT/main_stripped")"
run auto "$FIBT" run -- "$OUT/main_os"
check "refused-os-run" "err='$ERRT'" \
	grep -q 'main_os: [0-9]* kCFI checks left as compiled, not rewritten: a __cfi_ symbol names no 16-byte preamble .*-falign-functions=16' <<<"$ERRT"
ins=$("$FIBT" inspect "$OUT/main")
check "inspect-bridged" "$ins" \
	grep -qE '^stock kCFI: +[0-9]+ call sites through any register, [0-9]+ preambles' <<<"$ins"
check "inspect-typeids" "$ins" grep -q 'typed veneers' <<<"$ins"
check "inspect-json" "$("$FIBT" inspect --json "$OUT/main" | grep stock)" \
	grep -q '"stock": true' <<<"$("$FIBT" inspect --json "$OUT/main")"

# ---- a stock library dlopen'ed by a fineibt-cc program, and by a stock
# program under `fineibt run` (the library reaches the runtime through
# LD_AUDIT, before the loader relocated it: its veneers wait for that)
for pair in exact:libexact gen:libgen stock:libexact; do
	host=$OUT/host_${pair%%:*} lib=$OUT/${pair#*:}.so
	[ "${pair%%:*}" = stock ] && host="$FIBT run -- $host"
	for m in $MODES; do
		tag="${pair%%:*}[$m]"
		run "$m" $host "$lib"
		check "dlopen-$tag" "rc=$RC out='$OUTT' err='$ERRT'" \
			test "$RC" = 0 -a "$OUTT" = "sort 5 apple call 5" -a -z "$ERRT"
		[ "$m" = off ] && continue
		run "$m" $host "$lib" confuse
		check "dlopen-confused-$tag" "rc=$RC out='$OUTT' err='$ERRT'" \
			bash -c '[ "$1" = 132 ] && ! grep -q confused <<<"$2"' _ "$RC" "$OUTT"
		check "dlopen-report-$tag" "err='$ERRT'" rep_ok "$ERRT" stock_confuse
	done
done
exit 0
