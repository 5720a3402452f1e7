#!/usr/bin/env bash
# docs/ecosystem.md, "On a server: a daemon under fineibt", is what an
# operator sees: examples/daemon's mydaemon, built with fineibt-cc as its
# README says and started as its unit (mydaemon.service) starts it (the
# unit's ExecStart= with its Environment=; systemd does not run as pid 1
# here), gives
#  - on stderr (the journal of a unit) the report lines the page quotes;
#  - with FINEIBT_LOG=syslog, the same lines as datagrams
#    "<12>mydaemon[PID]: ..." under warn, "<10>" when fatal, also once
#    detached as daemon(3) does (stdio on /dev/null);
#  - in the journal (systemd-journald run by hand in a private mount
#    namespace, when it can be): `journalctl -p warning` lists the warn
#    report, `-p crit` the fatal one;
#  - fatal: death by SIGILL with a core, whose backtrace has the frames
#    the page names below "<signal handler called>";
#  - `fineibt inspect --pid` of the running daemon: the page's lines.
# The page quoted a program of no file here (daemon.c, handler_a) and two
# different call sites for one failure.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
FI=$ROOT/$BUILD/fineibt
CC=$ROOT/$BUILD/fineibt-cc
OUT=$ROOT/$BUILD/e2e/doc_daemon
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG FINEIBT_VERBOSE FINEIBT_SEQ FINEIBT_TEST_USER_IBT CFLAGS
. "$ROOT/tests/e2e/progs/rt_lib.bash"	# syslog_listen
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
ECO=$ROOT/docs/ecosystem.md
UNIT=$ROOT/examples/daemon/mydaemon.service
mask() { sed -E 's/\+0x[0-9a-f]+/+0xN/g'; }

# The page's section, and its quoted journal lines without "mydaemon[PID]: ".
sed -n '/^## On a server/,/^## /p' "$ECO" >"$OUT/section"
sed -n 's/^    mydaemon\[[0-9]*\]: //p' "$OUT/section" >"$OUT/doc.lines"

# Built as examples/daemon/README.md says, in a copy of the directory.
cp "$ROOT/examples/daemon/mydaemon.c" "$OUT/"
if ! (cd "$OUT" && "$CC" -O2 -g -o mydaemon mydaemon.c) >"$OUT/build.log" 2>&1; then
	fail daemon-build "$(tail -n 3 "$OUT/build.log")"
	exit 0
fi
pass daemon-build

# The unit's command and environment.
exec_line=$(sed -n 's/^ExecStart=//p' "$UNIT")
exec_prog=${exec_line%% *}
exec_args=
[ "$exec_prog" != "$exec_line" ] && exec_args=${exec_line#* }
mapfile -t unit_env < <(sed -n 's/^Environment=//p' "$UNIT")
if [ "$exec_prog" = /usr/local/bin/mydaemon ] && [ "${#unit_env[@]}" -ge 1 ]; then
	pass unit-read
else
	fail unit-read "ExecStart='$exec_line' Environment='${unit_env[*]}'"
fi
# unit_run ENV... -- ARGS...: the unit's ExecStart (the built program in
# place of /usr/local/bin/mydaemon) with its environment, then ENV, in an
# environment as empty as systemd's; stdout, stderr in $OUT/run.{out,err}.
unit_run() {
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	# shellcheck disable=SC2086 # the unit's arguments, split as systemd does here
	(cd "$OUT" && env -i PATH=/usr/bin:/bin "${unit_env[@]}" "${env[@]}" \
		"$OUT/mydaemon" $exec_args "$@") >"$OUT/run.out" 2>"$OUT/run.err"
}

# ---------------------------------------- the report, as the journal has it
unit_run -- -n 12 -i 1
rc=$?
if [ $rc != 0 ] || [ ! -s "$OUT/doc.lines" ]; then
	fail unit-warn-report "rc=$rc doc lines: $(wc -l <"$OUT/doc.lines") err: $(head -c 300 "$OUT/run.err")"
elif cmp -s <(mask <"$OUT/doc.lines") <(mask <"$OUT/run.err"); then
	pass unit-warn-report
else
	fail unit-warn-report "$(diff <(mask <"$OUT/doc.lines") <(mask <"$OUT/run.err") | head -n 12 | tr '\n' '|')"
fi
cp "$OUT/run.err" "$OUT/warn.err"

# -------------------------------------------- FINEIBT_LOG=syslog, a socket
listen() {
	rm -f "$OUT/log.sock"
	syslog_listen "$OUT"
}
# got PRI: the datagrams without "<PRI>mydaemon[PID]: ", all of that form
got() {
	grep -v '^ready$' "$OUT/got" | grep -v '^$' >"$OUT/got.all"
	sed -En "s/^<$1>mydaemon\[[0-9]+\]: //p" "$OUT/got.all"
	[ "$(wc -l <"$OUT/got.all")" = "$(grep -Ec "^<$1>mydaemon\[[0-9]+\]: " "$OUT/got.all")" ] || echo "(other datagrams)"
}
listen
unit_run FINEIBT_LOG=syslog:$OUT/log.sock -- -n 12 -i 1
wait "$lpid"
got 12 >"$OUT/got.warn"
if cmp -s "$OUT/got.warn" "$OUT/warn.err"; then
	pass syslog-warn-lines
else
	fail syslog-warn-lines "$(diff "$OUT/got.warn" "$OUT/warn.err" | head -n 8 | tr '\n' '|')"
fi
# Detached as daemon(3) does: nothing on stderr, the report in the log.
listen
unit_run FINEIBT_LOG=syslog:$OUT/log.sock -- -d -n 12 -i 1
rc=$?
wait "$lpid"
got 12 >"$OUT/got.detached"
if [ $rc = 0 ] && [ ! -s "$OUT/run.err" ] && cmp -s "$OUT/got.detached" "$OUT/warn.err"; then
	pass syslog-detached-lines
else
	fail syslog-detached-lines "rc=$rc err=$(head -c 200 "$OUT/run.err") $(diff "$OUT/got.detached" "$OUT/warn.err" | head -n 6 | tr '\n' '|')"
fi

# ------------------------------------------------------- fatal: SIGILL, core
# Without warn, in the directory a core lands in when core_pattern is a
# plain file name; the status as a parent (systemd) sees it.
cat >"$OUT/wait.py" <<'PY'
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execve(sys.argv[1], sys.argv[1:], dict(os.environ))
_, st = os.waitpid(pid, 0)
if os.WIFSIGNALED(st):
    print("signal", os.WTERMSIG(st), "core" if os.WCOREDUMP(st) else "nocore")
else:
    print("exit", os.WEXITSTATUS(st))
PY
fatal_env=()
for e in "${unit_env[@]}"; do
	case $e in FINEIBT_CFI=*) fatal_env+=("FINEIBT_CFI=kcfi") ;; *) fatal_env+=("$e") ;; esac
done
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
rm -f "$OUT"/core*
st=$(cd "$OUT" && ulimit -c unlimited 2>/dev/null
     env -i PATH=/usr/bin:/bin "${fatal_env[@]}" python3 "$OUT/wait.py" "$OUT/mydaemon" -n 3 -i 1 2>"$OUT/fatal.err")
if [ "${st% *}" = "signal 4" ] && grep -q "mode: kcfi)$" "$OUT/fatal.err"; then
	pass fatal-sigill
else
	fail fatal-sigill "status '$st': $(head -c 300 "$OUT/fatal.err")"
fi
core=$(ls "$OUT"/core* 2>/dev/null | head -n 1)
if [ "${pattern:0:1}" = "|" ] || [ "${pattern//\//}" != "$pattern" ] || ! command -v gdb >/dev/null; then
	pass "fatal-core-backtrace (skipped: core_pattern '$pattern' or no gdb)"
elif [ "$st" != "signal 4 core" ] || [ -z "$core" ]; then
	fail fatal-core-backtrace "no core: status '$st', core_pattern '$pattern'"
else
	gdb -q -batch -ex bt "$OUT/mydaemon" "$core" >"$OUT/bt" 2>&1
	# The frames below the handler, as "func () at file:line".
	sed -n '/<signal handler called>/,$p' "$OUT/bt" |
		sed -En 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([A-Za-z_0-9]+) \(.*\) at ([^ ]+)$/\2 () at \3/p' >"$OUT/bt.frames"
	tr '\n' ' ' <"$OUT/section" | grep -Eo '<signal handler called>`: `[^`]+`, `[^`]+`' |
		grep -Eo '`[a-z_]+ \(\) at [^`]+`' | tr -d '`' >"$OUT/doc.frames"
	if [ -s "$OUT/doc.frames" ] && cmp -s "$OUT/doc.frames" <(head -n 2 "$OUT/bt.frames"); then
		pass fatal-core-backtrace
	else
		fail fatal-core-backtrace "page [$(tr '\n' '|' <"$OUT/doc.frames")] core [$(tr '\n' '|' <"$OUT/bt.frames")]"
	fi
fi
rm -f "$OUT"/core*

# ---------------------------------------------------- fineibt inspect --pid
(cd "$OUT" && exec env -i PATH=/usr/bin:/bin "${unit_env[@]}" "$OUT/mydaemon" -i 100 >/dev/null 2>&1) &
dpid=$!
for _ in $(seq 50); do grep -q 'mydaemon' "/proc/$dpid/cmdline" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
"$FI" inspect --pid "$dpid" >"$OUT/pid.out" 2>"$OUT/pid.err"
rc=$?
kill "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
# The page's block: from "pid N: FINEIBT_CFI=" to the module line; pid and
# the module's directory masked.
pidmask() { sed -E 's/^pid [0-9]+:/pid N:/; s#^/[^ ]*/mydaemon( *)#mydaemon\1#' | awk '{ $1 = $1; print }'; }
sed -n '/^    pid [0-9]*: FINEIBT_CFI=kcfi/,/mydaemon /p' "$OUT/section" | sed 's/^    //' | pidmask >"$OUT/doc.pid"
pidmask <"$OUT/pid.out" >"$OUT/run.pid"
if [ $rc = 0 ] && [ -s "$OUT/doc.pid" ] && cmp -s "$OUT/doc.pid" "$OUT/run.pid"; then
	pass inspect-pid-lines
else
	fail inspect-pid-lines "rc=$rc $(diff "$OUT/doc.pid" "$OUT/run.pid" | tr '\n' '|') $(cat "$OUT/pid.err")"
fi

# ------------------------------------------------ the journal, where it runs
# systemd-journald needs no systemd as pid 1: run it in a mount namespace
# of its own, its sockets and files on tmpfs there, nothing outside
# touched; the daemon logs to its /dev/log socket (FINEIBT_LOG=syslog:).
JD=/lib/systemd/systemd-journald
if [ "$(id -u)" != 0 ] || [ ! -x "$JD" ] || ! command -v journalctl >/dev/null ||
   ! unshare -m --propagation private true 2>/dev/null; then
	pass "journal-priorities (skipped: needs root, unshare and $JD)"
else
	cat >"$OUT/journal.sh" <<EOF
set -u
for d in /run/systemd /run/log /var/log/journal; do
	mkdir -p \$d && mount -t tmpfs none \$d || exit 3
done
mkdir -p /run/systemd/journal
$JD >"$OUT/journald.log" 2>&1 &
jp=\$!
for _ in \$(seq 100); do [ -S /run/systemd/journal/dev-log ] && break; sleep 0.1; done
cd "$OUT"
env -i PATH=/usr/bin:/bin ${unit_env[*]} FINEIBT_LOG=syslog:/run/systemd/journal/dev-log ./mydaemon -n 12 -i 1 >/dev/null 2>&1
env -i PATH=/usr/bin:/bin ${fatal_env[*]} FINEIBT_LOG=syslog:/run/systemd/journal/dev-log ./mydaemon -n 3 -i 1 >/dev/null 2>&1
for _ in \$(seq 30); do
	[ "\$(journalctl --no-pager -q -t mydaemon 2>/dev/null | wc -l)" -ge 11 ] && break
	sleep 0.1
done
journalctl --no-pager -q -o cat -t mydaemon -p warning..warning >"$OUT/journal.warning"
journalctl --no-pager -q -o cat -t mydaemon -p crit..crit >"$OUT/journal.crit"
journalctl --no-pager -q -o short -t mydaemon -p warning >"$OUT/journal.short"
kill \$jp
wait \$jp
EOF
	unshare -m --propagation private bash "$OUT/journal.sh" 2>"$OUT/journal.err"
	rc=$?
	grep -v ' repeated ' "$OUT/warn.err" | sed 's/; mode: kcfi,warn)$/; mode: kcfi)/' >"$OUT/fatal.want"
	if [ $rc = 0 ] && cmp -s "$OUT/journal.warning" "$OUT/warn.err" &&
	   cmp -s "$OUT/journal.crit" "$OUT/fatal.want" &&
	   grep -Eq '^[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [^ ]+ mydaemon\[[0-9]+\]: fineibt: CFI failure at ' "$OUT/journal.short"; then
		pass journal-priorities
	else
		fail journal-priorities "rc=$rc $(cat "$OUT/journal.err") warning: $(head -c 300 "$OUT/journal.warning") crit: $(head -c 300 "$OUT/journal.crit")"
	fi
fi

# ----------------------------------------------------- the unit, verified
if command -v systemd-analyze >/dev/null; then
	sed "s#^ExecStart=/usr/local/bin/mydaemon#ExecStart=$OUT/mydaemon#" "$UNIT" >"$OUT/mydaemon.service"
	if systemd-analyze verify --man=no "$OUT/mydaemon.service" >"$OUT/verify.out" 2>&1; then
		pass unit-verifies
	else
		fail unit-verifies "$(head -c 400 "$OUT/verify.out")"
	fi
fi
exit 0
