#!/usr/bin/env bash
# protect_stockven (docs/protection.md, "Typed veneers: only what the
# loader bound"): a stock kCFI library's pointer word (.data, writable,
# bound by the loader to strcmp) rewritten by an attacker with a write
# primitive to an uninstrumented function of its choice, before the
# runtime's next typed-veneer pass (a dlopen). The pass used to make a
# veneer of whatever the word held, typed as the library's strcmp: the
# library's checked call then reached the attacker's function ("PWNED")
# in every mode. Now a veneer is made only of the loader's binding of the
# word's symbol: the call meets the attacker's function without a hash
# and traps (fatal, reported). Without the write, the library's calls
# through its veneers run as before, after the pass too.
#  - dladdr: the same write, and the attacker's library's link_map forged
#    for the pass (l_info[DT_SYMTAB], l_info[DT_STRTAB] aimed at writable
#    copies naming pwn_cmp "strcmp"): the pass took dladdr's "strcmp
#    exactly at pwn_cmp" as strcmp's binding in another object ("PWNED",
#    exit 0, in every mode on the tree before). Now the export dladdr
#    names must be confirmed by the kernel and the object's own read-only
#    tables (fi_export_real, tests/e2e/protect_export.sh): trapped.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
. "$ROOT/tests/e2e/progs/sets.bash"
SRC=$ROOT/tests/e2e/progs
OUT=$ROOT/$BUILD/e2e/protect_stockven
FCC=$ROOT/$BUILD/fineibt-cc
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD FINEIBT_VERBOSE FINEIBT_SEQ

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

if ! { clang-22 -O2 -g -fsanitize=kcfi -fcf-protection=branch -fPIC -shared "$SRC/compat_stock_lib.c" \
		-o "$OUT/libstock.so" &&
       cp "$OUT/libstock.so" "$OUT/libstock2.so" &&
       clang-22 -O2 -fPIC -shared "$SRC/protect_stockven_pwn.c" -o "$OUT/libpwn.so" &&
       "$FCC" -O2 -g --fineibt-exact "$SRC/protect_stockven.c" -o "$OUT/host"; } \
	>"$OUT/build.log" 2>&1; then
	fail protect_stockven_build "$(tail -n 3 "$OUT/build.log")"
	exit 0
fi

for m in $(fi_with_sets kcfi fineibt fineibt,paranoid auto); do
	out=$(FINEIBT_CFI=$m "$OUT/host" "$OUT/libstock.so" "$OUT/libstock2.so" \
		"$OUT/libpwn.so" 2>"$OUT/err")
	rc=$?
	err=$(cat "$OUT/err")
	if [ "$rc" = 132 ] && [ "$out" = $'sort 5 apple\npass done' ] &&
	   grep -qE '^fineibt: CFI failure at by_name\+0x[0-9a-f]+ \(target: pwn_cmp\+0x0 in libpwn\.so, not instrumented; expected type: ' <<<"$err"; then
		pass "forged[$m]: no veneer of the attacker's function; the call traps"
	else
		fail "forged[$m]" "rc=$rc out='$out' err='${err:0:300}'"
	fi
	out=$(FINEIBT_CFI=$m "$OUT/host" "$OUT/libstock.so" "$OUT/libstock2.so" \
		"$OUT/libpwn.so" dladdr 2>"$OUT/err")
	rc=$?
	err=$(cat "$OUT/err")
	if [ "$rc" = 132 ] && [ "$out" = $'sort 5 apple\npass done' ] &&
	   grep -qE '^fineibt: CFI failure at by_name\+0x[0-9a-f]+ \(target: pwn_cmp\+0x0 in libpwn\.so, not instrumented; expected type: ' <<<"$err"; then
		pass "dladdr[$m]: a forged link_map naming the attacker's function strcmp gets no veneer; the call traps"
	else
		fail "dladdr[$m]" "rc=$rc out='$out' err='${err:0:300}'"
	fi
	out=$(FINEIBT_CFI=$m "$OUT/host" "$OUT/libstock.so" "$OUT/libstock2.so" 2>"$OUT/err")
	rc=$?
	err=$(cat "$OUT/err")
	if [ "$rc" = 0 ] && [ "$out" = $'sort 5 apple\npass done\nsort 5 apple' ] &&
	   [ -z "$err" ]; then
		pass "bound[$m]: the loader's binding keeps its veneer across passes"
	else
		fail "bound[$m]" "rc=$rc out='$out' err='${err:0:300}'"
	fi
done
