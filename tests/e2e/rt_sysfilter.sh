#!/usr/bin/env bash
# rt_sysfilter: a fineibt-cc program in a unit with the most common
# system call filter, SystemCallFilter=@system-service (docs/ecosystem.md,
# "On a server"). The calls its start makes outside the group (strace,
# every base mode) are the ones that page names, no more (mincore; mseal
# where this systemd does not know it): when the runtime's calls change,
# the page must too. And its advice works: with SystemCallFilter=mincore
# added and SystemCallErrorNumber=EPERM (progs/seccomp_allow.c --errno,
# as systemd installs them), the program runs and a confused call is
# stopped, in every base mode; without them, systemd's default (kill).
# With mseal alone refused (EPERM, progs/seccomp_deny.c: what that
# advice does on a systemd that cannot name it), the state is read-only
# but not sealed: FINEIBT_VERBOSE says so (once), and only then.
# The filter parts need strace and systemd-analyze.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/sdfilter.bash"
D=$RT_OUT/rt_sysfilter
mkdir -p "$D"
{ rt_build "$D/prog" -O2 "$RT_SRC/rt_mdwe.c" -ldl -lpthread &&
  cc -O1 -o "$D/seccomp_allow" "$RT_SRC/seccomp_allow.c" &&
  cc -O1 -o "$D/seccomp_deny" "$RT_SRC/seccomp_deny.c"; } ||
	{ rt_fail build "could not build the programs"; exit 1; }

NOSEAL='fineibt: the runtime state is read-only but not sealed (mseal refused'
for m in "${RT_BASE_MODES[@]}"; do
	FINEIBT_VERBOSE=1 rt_run "sysfilter-noseal" "$m" "$D/seccomp_deny" 462 "$D/prog"
	r1=$RT_RC o1=$RT_OUT_TXT n1=$(grep -cF "$NOSEAL" <<<"$RT_ERR_TXT")
	FINEIBT_VERBOSE=1 rt_run "sysfilter-seal" "$m" "$D/prog"
	n2=$(grep -cF "$NOSEAL" <<<"$RT_ERR_TXT")
	if [ "$r1" = 0 ] && [ "$o1" = "ok 42" ] && [ "$n1" = 1 ] &&
	   [ "$RT_RC" = 0 ] && [ "$n2" = 0 ]; then
		rt_pass "noseal[$m]: mseal refused: runs, verbose says not sealed"
	else
		rt_fail "noseal[$m]" "rc=$r1 out='$o1' lines=$n1; unfiltered rc=$RT_RC lines=$n2"
	fi
done

for t in strace systemd-analyze; do
	command -v $t >/dev/null || { echo "SKIP: rt_sysfilter: needs $t"; exit 0; }
done
sd_expand @system-service >"$D/group"
if [ "$(wc -l <"$D/group")" -lt 100 ]; then
	echo "SKIP: rt_sysfilter: systemd-analyze lists no @system-service here"
	exit 0
fi
# The page's list: the calls named in its SystemCallFilter= item.
sed -n '/^- `SystemCallFilter=@system-service`/,/^$/p' "$ROOT/docs/ecosystem.md" >"$D/doc"
: >"$D/used"
for m in "${RT_BASE_MODES[@]}"; do
	FINEIBT_CFI=$m strace -f -qq -o "$D/trace" "$D/prog" >/dev/null 2>&1
	sed -E 's/^[0-9]+ +//; s/\(.*//; /^(---|\+\+\+|<\.\.\.)/d; s/^syscall_0x1ce$/mseal/' "$D/trace" >>"$D/used"
done
sort -u "$D/used" -o "$D/used"
outside=$(comm -23 "$D/used" "$D/group" | grep -v '^execve$' | tr '\n' ' ')
bad=
for c in $outside; do
	grep -q "\`$c\`" "$D/doc" || bad+="$c "
done
if [ -n "$outside" ] && [ -z "$bad" ]; then
	rt_pass "outside-group: the calls outside @system-service ($outside) are the page's"
else
	rt_fail outside-group "outside @system-service: '$outside'; not named by docs/ecosystem.md: '$bad'"
fi

# The advice: the group plus mincore, other calls EPERM.
{ cat "$D/group"; echo mincore; } | sort -u >"$D/allow"
NRS=$(sd_numbers "$D/allow")
for m in "${RT_BASE_MODES[@]}"; do
	rt_run "sysfilter" "$m" "$D/seccomp_allow" --errno=1 "$NRS" "$D/prog"
	r1=$RT_RC o1=$RT_OUT_TXT
	rt_run "sysfilter-confused" "$m" "$D/seccomp_allow" --errno=1 "$NRS" "$D/prog" confused
	want=132
	[ "$m" = off ] && want=0
	if [ "$r1" = 0 ] && [ "$o1" = "ok 42" ] && [ "$RT_RC" = "$want" ]; then
		rt_pass "advice[$m]: runs, a confused call as without the filter"
	else
		rt_fail "advice[$m]" "rc=$r1 out='$o1' confused rc=$RT_RC err=$(head -c 300 <<<"$RT_ERR_TXT")"
	fi
done
exit 0
