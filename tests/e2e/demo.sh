#!/usr/bin/env bash
# fineibt demo: the table must show what each mode really stops. Every
# cell comes from a real run of build/demo/fi-attack, so this checks the
# whole chain (fineibt-cc, runtime, passes, trap handler) per mode.
set -u
BUILD=${BUILD:-build}
out=$("$BUILD/fineibt" demo 2>&1)
rc=$?
[ "$rc" = 0 ] && echo "PASS: demo exits 0" || echo "FAIL: demo exits 0: status $rc"

# row MODE: the four cells, separated by '|'
row() {
	awk -v m="$1" '$1 == "mode" { t = 1; next } /^$/ { t = 0 } t && $1 == m { line = substr($0, 15); gsub(/  +/, "|", line); sub(/^\|/, "", line); sub(/\|$/, "", line); print line }' <<<"$out"
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
expect off          "$N|$N|$N|$N"
expect kcfi         "$S|$S|$S|$W"
expect fineibt      "$S|$N|$S|$W"
expect paranoid     "$S|$S|$S|$W"
expect bhi          "$S|$N|$S|$W"
expect paranoid+bhi "$S|$S|$S|$W"
expect auto         "$S|$S|$S|$W"
if grep -q 'CFI failure at call_it+0x[0-9a-f]* (target: gadget+0x10; expected type: 0x[0-9a-f]\{8\}; mode: paranoid/v4)' <<<"$out"; then
	echo "PASS: demo shows the paranoid report of the pivot"
else
	echo "FAIL: demo shows the paranoid report of the pivot"
fi
