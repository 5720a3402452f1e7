#!/usr/bin/env bash
# trap_syslog_closed: FINEIBT_LOG=syslog in a program that closes every
# descriptor above 2 (closefrom(3), as many daemons do when they start):
# the runtime's socket to the system log is gone, and its number may be
# a socket of the program's now. The report used to be sent there (to
# whatever peer the program's socket has: a client); then it was kept on
# stderr only, and the daemon's system log had no copy. Now the handler
# checks the number is still the socket it opened (device and inode, as
# for a FINEIBT_LOG file) and otherwise sends the report through a
# socket of its own to the same path: the system log gets every line,
# the program's socket nothing, and stderr no warning. When the path
# cannot be reached any more (removed here), one warning and the report
# on stderr. progs/trap_syslog_closed.c gives the number to a socket pair
# and prints what its other end received.
. "$(dirname "$0")/progs/rt_lib.bash"
D=$RT_OUT/trap_syslog_closed
mkdir -p "$D"
rt_build "$D/prog" -O2 -g "$RT_SRC/trap_syslog_closed.c" ||
	{ rt_fail "trap_syslog_closed build" "fineibt-cc failed"; exit 1; }
CLOSED="the program closed the system log's socket"

rm -f "$D/log.sock"
syslog_listen "$D"
pids=()
for m in kcfi,warn fineibt,paranoid,warn fineibt,warn kcfi; do
	FINEIBT_CFI=$m FINEIBT_LOG=syslog:$D/log.sock "$D/prog" >"$D/out" 2>"$D/err" &
	pid=$!
	wait $pid 2>/dev/null
	rc=$?
	pids+=("$m:$pid:$rc")
	want=0
	[ "$m" = kcfi ] && want=132
	if [ "$rc" = "$want" ] && { [ "$m" = kcfi ] || [ "$(cat "$D/out")" = "peer: none" ]; }; then
		rt_pass "$m: nothing sent to the program's socket"
	else
		rt_fail "$m: nothing sent to the program's socket" "rc=$rc $(head -c 300 "$D/out")"
	fi
	if grep -qE "$RT_REPORT_RE" "$D/err" && ! grep -q "warning: FINEIBT_LOG" "$D/err"; then
		rt_pass "$m: the report on stderr, no warning"
	else
		rt_fail "$m: the report on stderr, no warning" "$(head -c 400 "$D/err")"
	fi
done
wait "$lpid" 2>/dev/null
cp "$D/got" "$D/got.first"
for e in "${pids[@]}"; do
	m=${e%%:*} pid=${e#*:} pid=${pid%%:*}
	pri=12
	[ "$m" = kcfi ] && pri=10
	if grep -Eq "^<$pri>prog\[$pid\]: fineibt: CFI failure at .*target: tc_other\+0x0" "$D/got.first" &&
	   grep -Eq "^<$pri>prog\[$pid\]: fineibt:   " "$D/got.first"; then
		rt_pass "$m: the system log got the report through a new socket"
	else
		rt_fail "$m: the system log got the report through a new socket" "$(grep "\[$pid\]" "$D/got.first" | head -c 400)"
	fi
done

# The log's socket removed after the program closed the kept one: no
# socket can reach it; one warning, the report on stderr.
rm -f "$D/log.sock"
syslog_listen "$D"
FINEIBT_CFI=kcfi,warn FINEIBT_LOG=syslog:$D/log.sock "$D/prog" unlink >"$D/out" 2>"$D/err"
rc=$?
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
if [ "$rc" = 0 ] && [ "$(cat "$D/out")" = "peer: none" ] && grep -qE "$RT_REPORT_RE" "$D/err" &&
   [ "$(grep -c "$CLOSED and a new one cannot reach it; reports are on stderr only" "$D/err")" = 1 ]; then
	rt_pass "unreachable: the report on stderr, one warning"
else
	rt_fail "unreachable: the report on stderr, one warning" "rc=$rc $(head -c 300 "$D/out") $(head -c 400 "$D/err")"
fi
exit 0
