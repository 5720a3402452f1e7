#!/usr/bin/env bash
# Where reports go besides stderr (docs/traps.md, "FINEIBT_LOG"):
# a FINEIBT_LOG file that cannot be opened gives one warning and the
# report stays on stderr; FINEIBT_LOG=syslog:PATH sends each report line
# as one datagram "<PRI>name[pid]: line" to the socket at PATH (the
# system log's /dev/log without :PATH), severity crit (fatal) or warning
# (warn); a log socket that is not there gives one warning and the
# report stays on stderr.
. "$(dirname "$0")/progs/rt_lib.bash"
P=$RT_OUT/trap_syslog
rt_build "$P" -O1 -g "$RT_SRC/compat_san.c" -lpthread || { rt_fail build "fineibt-cc failed"; exit 1; }
S=$RT_OUT/trap_syslog.d
rm -rf "$S"
mkdir -p "$S"
CFI_ERE='^fineibt: CFI failure at main\+0x[0-9a-f]+ \(target: add1_long\+0x0'

# ---------------------------------------- a log file that cannot be opened
FINEIBT_LOG=/nonexistent/dir/x.json rt_run log-unopenable auto "$P" confused
warns=$(grep -c '^fineibt: warning: FINEIBT_LOG=/nonexistent/dir/x.json: cannot open (No such file or directory); CFI failures are reported on stderr only$' <<<"$RT_ERR_TXT")
if [ "$RT_RC" = 132 ] && [ "$warns" = 1 ] && grep -Eq "$CFI_ERE" <<<"$RT_ERR_TXT"; then
	rt_pass log-unopenable-warns-once
else
	rt_fail log-unopenable-warns-once "rc=$RT_RC warnings=$warns: $RT_ERR_TXT"
fi
FINEIBT_LOG=/nonexistent/dir/x.json rt_run log-unopenable-clean auto "$P"
if [ "$RT_RC" = 0 ] && [ "$(grep -c 'warning: FINEIBT_LOG' <<<"$RT_ERR_TXT")" = 1 ]; then
	rt_pass log-unopenable-no-failure
else
	rt_fail log-unopenable-no-failure "rc=$RT_RC: $RT_ERR_TXT"
fi

# ------------------------------------------------ the system log's socket
syslog_listen "$S"
FINEIBT_LOG=syslog:$S/log.sock rt_run syslog-fatal auto "$P" confused
fatal_err=$RT_ERR_TXT fatal_rc=$RT_RC
FINEIBT_LOG=syslog:$S/log.sock rt_run syslog-warn auto,warn "$P" confused
warn_rc=$RT_RC
wait "$lpid"
name=${P##*/}
if [ "$fatal_rc" = 132 ] && grep -Eq "$CFI_ERE" <<<"$fatal_err"; then
	rt_pass syslog-report-stays-on-stderr
else
	rt_fail syslog-report-stays-on-stderr "rc=$fatal_rc: $fatal_err"
fi
if grep -Eq "^<10>$name\[[0-9]+\]: fineibt: CFI failure at main\+0x[0-9a-f]+ \(target: add1_long\+0x0;.*\)$" "$S/got"; then
	rt_pass syslog-fatal-line-crit
else
	rt_fail syslog-fatal-line-crit "$(head -c 600 "$S/got")"
fi
if grep -Eq "^<10>$name\[[0-9]+\]: fineibt:   [a-z]" "$S/got"; then
	rt_pass syslog-detail-lines
else
	rt_fail syslog-detail-lines "$(head -c 600 "$S/got")"
fi
if [ "$warn_rc" = 0 ] && grep -Eq "^<12>$name\[[0-9]+\]: fineibt: CFI failure at .*[;,] ?warn\)$" "$S/got"; then
	rt_pass syslog-warn-line-warning
else
	rt_fail syslog-warn-line-warning "rc=$warn_rc: $(head -c 600 "$S/got")"
fi
# Every datagram is one whole line of the report.
if [ "$(grep -cv '^ready$\|^<1[02]>' "$S/got")" = 0 ]; then
	rt_pass syslog-one-line-per-datagram
else
	rt_fail syslog-one-line-per-datagram "$(head -c 600 "$S/got")"
fi

# ------------------------------------------------- no log socket there
FINEIBT_LOG=syslog:$S/none.sock rt_run syslog-missing auto "$P" confused
warns=$(grep -c "^fineibt: warning: FINEIBT_LOG=syslog:$S/none.sock: cannot reach the system log at $S/none.sock (No such file or directory); CFI failures are reported on stderr only$" <<<"$RT_ERR_TXT")
if [ "$RT_RC" = 132 ] && [ "$warns" = 1 ] && grep -Eq "$CFI_ERE" <<<"$RT_ERR_TXT"; then
	rt_pass syslog-missing-falls-back
else
	rt_fail syslog-missing-falls-back "rc=$RT_RC warnings=$warns: $RT_ERR_TXT"
fi
exit 0
