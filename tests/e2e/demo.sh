#!/usr/bin/env bash
# fineibt demo: the table must show what each mode really stops. Every
# cell comes from a real run of build/demo/fi-attack, so this checks the
# whole chain (fineibt-cc, runtime, passes, trap handler) per mode.
set -u
BUILD=${BUILD:-build}
out=$("$BUILD/fineibt" demo 2>&1)
rc=$?
[ "$rc" = 0 ] && echo "PASS: demo exits 0" || echo "FAIL: demo exits 0: status $rc"

# row LABEL: the four cells, separated by '|' (labels are 22 wide)
row() {
	awk -v m="$1" '$1 == "mode" { t = 1; next } /^$/ { t = 0 } t && substr($0, 1, 22) ~ "^" m " *$" { line = substr($0, 23); gsub(/  +/, "|", line); sub(/^\|/, "", line); sub(/\|$/, "", line); print line }' <<<"$out"
}
expect() {
	local mode=$1 want=$2 got
	got=$(row "$mode")
	if [ "$got" = "$want" ]; then
		echo "PASS: demo row $mode"
	else
		echo "FAIL: demo row $mode: got '$got', want '$want'"
	fi
}
S=stopped N="NOT STOPPED" W="reported, ran on"
# Rows are labelled by their cfi= words (the one spelling of modes).
expect off                    "$N|$N|$N|$N"
expect kcfi                   "$S|$S|$S|$W"
expect fineibt                "$S|$N|$S|$W"
expect fineibt,paranoid       "$S|$S|$S|$W"
expect fineibt,bhi            "$S|$N|$S|$W"
expect fineibt,paranoid,bhi   "$S|$S|$S|$W"
expect auto                   "$S|$S|$S|$W"
expect 'auto \(user IBT\)'     "$S|$S|$S|$W"
# What auto became is read from the runs' reports: kcfi without user IBT,
# fineibt,paranoid through the test hook (the kernel's rule).
if grep -qx 'auto ran as: kcfi (this process: no user IBT); with user IBT (test hook FINEIBT_TEST_USER_IBT=1): fineibt,paranoid' <<<"$out"; then
	echo "PASS: demo measures what auto became, in both branches"
else
	echo "FAIL: demo measures what auto became: $(grep '^auto ran as' <<<"$out")"
fi
if grep -q 'CFI failure at call_it+0x[0-9a-f]* (target: twice+0x0; expected type: 0x[0-9a-f]\{8\}; mode: kcfi)' <<<"$out"; then
	echo "PASS: demo shows auto's report, in kcfi"
else
	echo "FAIL: demo shows auto's report, in kcfi"
fi
if grep -q 'CFI failure at call_it+0x[0-9a-f]* (target: gadget+0x10; expected type: 0x[0-9a-f]\{8\}; mode: fineibt,paranoid)' <<<"$out"; then
	echo "PASS: demo shows the paranoid report of the pivot"
else
	echo "FAIL: demo shows the paranoid report of the pivot"
fi

# A run that cannot be made is an error: one line, exit 1. The demo used to
# print "could not run" in every cell and exit 0, and it kept the runs'
# output in tmpfile(3) files, so a /tmp it cannot write (a read-only
# root, a full disk) failed every run.
FI=$PWD/$BUILD/fineibt
D=$PWD/$BUILD/e2e/demo
mkdir -p "$D"
printf 'not a program\n' >"$D/notexe"
chmod 755 "$D/notexe"
FINEIBT_DEMO_PROG=$D/notexe "$FI" demo >"$D/out" 2>"$D/err"
rc=$?
if [ "$rc" = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] &&
   grep -qx "fineibt: error: demo: 32 of 32 runs of $D/notexe could not be made: Exec format error" "$D/err"; then
	echo "PASS: demo: runs that cannot be made: one error line, exit 1"
else
	echo "FAIL: demo: runs that cannot be made: one error line, exit 1: rc=$rc, $(head -c 300 "$D/err")"
fi
FINEIBT_DEMO_PROG=/nonexistent/fi-attack "$FI" demo >"$D/out" 2>"$D/err"
rc=$?
if [ "$rc" = 1 ] && [ "$(cat "$D/err")" = "fineibt: error: demo: FINEIBT_DEMO_PROG=/nonexistent/fi-attack: No such file or directory" ]; then
	echo "PASS: demo: FINEIBT_DEMO_PROG that is not there named"
else
	echo "FAIL: demo: FINEIBT_DEMO_PROG that is not there named: rc=$rc, $(head -c 300 "$D/err")"
fi
# /tmp read-only, in a mount namespace of its own (root only): bound on
# itself read-only, so that a build under /tmp stays where it is.
if unshare -m true 2>/dev/null; then
	out=$(unshare -m --propagation private sh -c 'mount --bind /tmp /tmp &&
		mount -o remount,bind,ro /tmp && ! touch /tmp/.fi-demo-ro 2>/dev/null &&
		exec "$1" demo' sh "$FI" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && [ "$(row kcfi)" = "$S|$S|$S|$W" ]; then
		echo "PASS: demo with /tmp read-only"
	else
		echo "FAIL: demo with /tmp read-only: rc=$rc, kcfi row '$(row kcfi)'"
	fi
else
	echo "PASS: demo with /tmp read-only (skipped: no mount namespace)"
fi
exit 0
