#!/usr/bin/env bash
# trap_fifo: the report of a CFI failure reads a module's file by its
# path (its symbols and DWARF, src/elf/symfile.c and src/trap/dwline.c);
# a path that is no longer a regular file must not stop it. Here the
# library's file is replaced by a FIFO between load and the confused
# call: the report opens without blocking, takes no FIFO or device,
# and the process still dies of SIGILL with its report (before, the
# SIGILL handler blocked in open(2) for a writer that never came, and
# nothing was reported). The control run, file in place, names the
# library's function and source line.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/trap_fifo.d
rm -rf "$D"
mkdir -p "$D"
rt_build "$D/libtf.so" -g -O1 -fPIC -shared "$RT_SRC/trap_fifo_lib.c" &&
rt_build "$D/trap_fifo" -g -O1 "$RT_SRC/trap_fifo.c" -L"$D" -ltf \
	-Wl,-rpath,'$ORIGIN' ||
	{ rt_fail build "fineibt-cc could not build trap_fifo"; exit 1; }

# The file in place: the report names tf_call and trap_fifo_lib.c.
{ echo go | "$D/trap_fifo" >"$D/out" 2>"$D/err"; rc=$?; } 2>/dev/null
if [ $rc = 132 ] && grep -Eq "$RT_REPORT_RE" "$D/err" &&
   grep -q '^fineibt: CFI failure at tf_call+' "$D/err" &&
   grep -q 'call site: .*trap_fifo_lib.c:7 ' "$D/err"; then
	rt_pass "fifo-control: the library's file read for the report"
else
	rt_fail fifo-control "rc=$rc err=$(head -c 600 "$D/err")"
fi

# The file replaced by a FIFO while the program waits on its stdin (a
# FIFO of its own, held open read-write here so that no open blocks).
mkfifo "$D/in"
exec 3<>"$D/in"
# (Started and waited for in a group whose stderr hides bash's notice of
# the SIGILL; its pid in $D/pid, its status in $D/rc.)
{
	"$D/trap_fifo" <&3 >"$D/out" 2>"$D/err" &
	echo $! >"$D/pid"
	wait $!
	echo $? >"$D/rc"
} 2>/dev/null &
group=$!
until [ -s "$D/pid" ]; do sleep 0.1; done
pid=$(cat "$D/pid")
for _ in $(seq 100); do
	grep -q ready "$D/out" 2>/dev/null && break
	sleep 0.1
done
mv "$D/libtf.so" "$D/libtf.so.old"
mkfifo "$D/libtf.so"
echo go >&3
# A bound on the wait, not a timing: the handler either reports and the
# process dies, or blocks for good.
for _ in $(seq 100); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	kill -KILL "$pid"
	wait "$group"
	rt_fail fifo-replaced "the process still runs 10 s after its confused call (err=$(head -c 300 "$D/err"))"
else
	wait "$group"
	rc=$(cat "$D/rc")
	if [ "$rc" = 132 ] && grep -Eq "$RT_REPORT_RE" "$D/err"; then
		rt_pass "fifo-replaced: reported and stopped, the FIFO left unopened"
	else
		rt_fail fifo-replaced "rc=$rc err=$(head -c 600 "$D/err")"
	fi
fi
exec 3>&-
rm -rf "$D"
exit 0
