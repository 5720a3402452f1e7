#!/usr/bin/env bash
# The runtime's descriptors stay above 0, 1 and 2. A program started with
# them closed, and the fork child of a daemon that closed them, used to
# find /proc/self/mem on 0 and /proc/self/maps on 1 (the lowest free
# numbers), the FINEIBT_LOG file or the system log's socket next: the
# program's first open did not get 0, and what it wrote on 1 or 2 went
# into the runtime's files. progs/rt_stdio.c looks at the three numbers.
. "$(dirname "$0")/progs/rt_lib.bash"
D=$RT_OUT/rt_stdio
mkdir -p "$D"
{ rt_build "$D/rt_stdio" -O2 "$RT_SRC/rt_stdio.c" -ldl &&
  rt_build "$D/libstdio.so" -O2 -fPIC -shared "$RT_SRC/rt_stdio_lib.c"; } ||
	{ rt_fail "rt_stdio build" "fineibt-cc failed"; exit 1; }
want="fd0=closed fd1=closed fd2=closed"
rm -f "$D/log.sock"
syslog_listen "$D"
for m in kcfi fineibt,paranoid,bhi; do
	for log in "" "$D/log.json" "syslog:$D/log.sock"; do
		for how in start fork; do
			name="$how ${m}${log:+ FINEIBT_LOG=${log##*/}}"
			rm -f "$D/out"
			# start: begun with the three closed; fork: with them
			# open, closed by the parent before it forks.
			if [ "$how" = start ]; then
				FINEIBT_CFI=$m FINEIBT_LOG=$log FINEIBT_CACHE=off \
					"$D/rt_stdio" start "$D/out" <&- >&- 2>&-
			else
				FINEIBT_CFI=$m FINEIBT_LOG=$log FINEIBT_CACHE=off \
					"$D/rt_stdio" fork "$D/out" "$D/libstdio.so" \
					</dev/null >/dev/null 2>&1
			fi
			rc=$?
			got=$(cat "$D/out" 2>/dev/null)
			if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
				rt_pass "$name: 0, 1 and 2 left closed"
			else
				rt_fail "$name: 0, 1 and 2 left closed" "rc=$rc, $got"
			fi
		done
	done
done
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
exit 0
