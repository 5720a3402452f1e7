#!/usr/bin/env bash
# trap_syslog_closed: FINEIBT_LOG=syslog in a program that closes every
# descriptor above 2 (closefrom(3), as many daemons do when they start):
# the runtime's socket to the system log is gone, and its number may be
# a socket of the program's now. The report used to be sent there (to
# whatever peer the program's socket has: a client). Now the handler
# checks the number is still the socket it opened (device and inode, as
# for a FINEIBT_LOG file), warns once on stderr and keeps the report on
# stderr. progs/trap_syslog_closed.c gives the number to a socket pair
# and prints what its other end received.
. "$(dirname "$0")/progs/rt_lib.bash"
D=$RT_OUT/trap_syslog_closed
mkdir -p "$D"
rt_build "$D/prog" -O2 "$RT_SRC/trap_syslog_closed.c" ||
	{ rt_fail "trap_syslog_closed build" "fineibt-cc failed"; exit 1; }
rm -f "$D/log.sock"
syslog_listen "$D"
for m in kcfi,warn fineibt,paranoid,warn fineibt,warn; do
	FINEIBT_CFI=$m FINEIBT_LOG=syslog:$D/log.sock "$D/prog" >"$D/out" 2>"$D/err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$D/out")" = "peer: none" ]; then
		rt_pass "$m: nothing sent to the program's socket"
	else
		rt_fail "$m: nothing sent to the program's socket" "rc=$rc $(head -c 300 "$D/out")"
	fi
	if grep -qE "$RT_REPORT_RE" "$D/err" &&
	   [ "$(grep -c "the program closed the system log's socket; reports are on stderr only" "$D/err")" = 1 ]; then
		rt_pass "$m: the report on stderr, one warning"
	else
		rt_fail "$m: the report on stderr, one warning" "$(head -c 400 "$D/err")"
	fi
done
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
exit 0
