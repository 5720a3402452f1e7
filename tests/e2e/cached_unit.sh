#!/usr/bin/env bash
# cached_unit: the shipped unit (systemd/fineibt-cached.service.in) gives
# `fineibt cached` exactly what it needs. systemd is not pid 1 here, so
# the service is run as the unit would run it: root with the unit's
# CapabilityBoundingSet (setpriv), no new privileges, under the unit's
# SystemCallFilter= (its groups expanded by systemd-analyze, numbered by
# <sys/syscall.h>, installed by progs/seccomp_allow.c: a call outside it
# kills the service, systemd's default), with PR_SET_MDWE where the
# kernel has it (MemoryDenyWriteExecute=), in a network namespace of its
# own and a mount namespace whose / is read-only (PrivateNetwork=,
# ProtectSystem=strict; its directory stays writable). Then a user's
# first start makes the key and fills, the next maps the entry, the key
# is the user's and immutable, entries are evicted within the cap, and a
# version change (an upgrade) wipes every user's directory. With each
# capability of the set taken away one step fails: the set is no larger
# than the service needs. And the unit's other lines: verify clean, its
# exposure (systemd-analyze security --offline) at most 2.0 (8.9 before).
# Needs root, setpriv, unshare and systemd-analyze (>= 250 for --offline).
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"
. "$(dirname "$0")/progs/sdfilter.bash"

UNIT=$ROOT/systemd/fineibt-cached.service.in
for t in unshare systemd-analyze; do
	command -v $t >/dev/null || { echo "SKIP: cached_unit: needs $t"; exit 0; }
done
cache_setup cached_unit

# --------------------------------------------------------- the lines
# unit_values KEY: every value of KEY= in the unit, one a line, in order.
unit_values() { sed -n "s/^$1=//p" "$UNIT"; }
CAPS=$(unit_values CapabilityBoundingSet)
if [ -n "$CAPS" ] && [ "$(unit_values NoNewPrivileges)" = yes ] &&
   [ "$(unit_values SystemCallArchitectures)" = native ] &&
   [ "$(unit_values RestrictAddressFamilies)" = AF_UNIX ] &&
   [ "$(unit_values RuntimeDirectory)" = fineibt ] &&
   [ "$(unit_values RuntimeDirectoryPreserve)" = yes ] &&
   grep -q -- '--dir /run/fineibt$' <<<"$(unit_values ExecStart)" &&
   ! grep -q '^User=' "$UNIT"; then
	rt_pass "unit-lines: capabilities, no new privileges, native calls, AF_UNIX, /run/fineibt kept"
else
	rt_fail unit-lines "$(grep -E '^(Cap|NoNew|SystemCallArch|RestrictAddr|Runtime|ExecStart|User)' "$UNIT")"
fi

# systemd-analyze on the unit as installed (its paths filled in).
FIBT_DIR=$(dirname "$FIBT")
sed -e "s|@BINDIR@|$FIBT_DIR|g" -e "s|@DOCDIR@|$ROOT/docs|g" "$UNIT" \
	>"$T/fineibt-cached.service"
out=$(cd "$T" && systemd-analyze verify --man=no ./fineibt-cached.service 2>&1)
if [ -z "$out" ]; then
	rt_pass "unit-verify: systemd-analyze verify is clean"
else
	rt_fail unit-verify "$out"
fi
if score=$(cd "$T" && systemd-analyze security --offline=yes ./fineibt-cached.service 2>/dev/null |
	   sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p') && [ -n "$score" ]; then
	if awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
		rt_pass "unit-security: exposure $score (at most 2.0)"
	else
		rt_fail unit-security "exposure $score, more than 2.0"
	fi
else
	echo "SKIP: unit-security: systemd-analyze security --offline is not available"
fi

# ------------------------------------------------ the system calls
# SystemCallFilter= as systemd reads its lines: the first (an allow-list)
# sets the list, a later ~ line takes calls out, a later plain one adds.
: >"$T/allow"
first=1
while read -r line; do
	if [ $first = 1 ]; then
		[[ $line == "~"* ]] && { rt_fail unit-filter "the first SystemCallFilter= is a deny-list"; break; }
		# shellcheck disable=SC2086
		sd_expand $line >"$T/allow"
		first=0
	elif [[ $line == "~"* ]]; then
		# shellcheck disable=SC2086
		sd_expand ${line#\~} >"$T/deny"
		comm -23 "$T/allow" "$T/deny" >"$T/allow.n" && mv "$T/allow.n" "$T/allow"
	else
		# shellcheck disable=SC2086
		sd_expand $line | sort -u - "$T/allow" >"$T/allow.n" && mv "$T/allow.n" "$T/allow"
	fi
done < <(unit_values SystemCallFilter)
NRS=$(sd_numbers "$T/allow")
SA=$T/seccomp_allow
# MemoryDenyWriteExecute=: the kernel's, where it has it (else none)
MDWE=()
cc -O1 -o "$T/mdwe_run" "$RT_SRC/mdwe_run.c" && "$T/mdwe_run" prctl true 2>/dev/null &&
	MDWE=("$T/mdwe_run" prctl)
if [ "$(wc -l <"$T/allow")" -lt 100 ] || [ -z "$NRS" ] ||
   ! cc -O1 -o "$SA" "$RT_SRC/seccomp_allow.c"; then
	rt_fail unit-filter "no filter to run the service under ($(wc -l <"$T/allow") calls)"
	exit 1
fi
if grep -qx mount "$T/allow" || grep -qx ptrace "$T/allow" || ! grep -qx fchown "$T/allow"; then
	rt_fail unit-filter "mount or ptrace allowed, or fchown not"
else
	rt_pass "unit-filter: $(wc -l <"$T/allow") calls, fchown in, mount and ptrace out"
fi

# ---------------------------------------------------- the service
# Three programs: three entries of about the same size.
for i in 1 2 3; do
	printf 'static int f(int a) { return a + %d; }\nint (*volatile p)(int) = f;\nint main(void) { return p(-%d); }\n' \
		"$i" "$i" >"$T/p$i.c"
	"$FCC" -O2 -o "$T/p$i" "$T/p$i.c" || { rt_fail build "fineibt-cc"; exit 1; }
done
chmod 755 "$T"/p?

# as_unit CAPS ARGS...: the service as the unit runs it, with the
# capability bounding set CAPS (setpriv's +cap,... form), on $D.
as_unit() {
	local caps=$1
	shift
	stop_svc
	rm -f "$D/sock"
	unshare -n -m --propagation slave sh -c 'mount -o remount,bind,ro / && exec "$@"' sh \
		setpriv --bounding-set=-all"$caps" --inh-caps=-all -- \
		"${MDWE[@]}" "$SA" "$NRS" "$FIBT" cached --dir "$D" --verbose "$@" 2>>"$T/svc.log" &
	SVC_PID=$!
	svc_ready
}
entries() { ls "$U" 2>/dev/null | grep -cE '^[0-9a-f]{32}$'; }
wait_entries() {
	for _ in $(seq 60); do
		[ "$(entries)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# as nobody, kcfi,debug, the cache at $D: RT_ERR_TXT says what it did
nb() { rt_run "cached_unit-$1" kcfi,debug env FINEIBT_CACHE="$D" "${NOBODY[@]}" "$T/$1"; }

# serve CAPS: the service's life under the unit's limits, one line of
# what failed (empty when all went as it should).
serve() {
	local caps=$1 why=
	chattr -i "$D"/u*/key 2>/dev/null
	rm -rf "$D"/u* "$D/master" "$D/version"
	: >"$T/svc.log"
	as_unit "$caps" --max-size 1M --user-max 48K || { echo "did not start: $(cat "$T/svc.log")"; return; }
	nb p1
	wait_entries 1 || why="no entry made ($(tail -1 "$T/svc.log"))"
	nb p1
	[ -z "$why" ] && ! grep -q 'mapped from the cache' <<<"$RT_ERR_TXT" && why="the next start missed"
	if [ -z "$why" ]; then
		[ "$(stat -c '%U %a' "$U/key")" = "nobody 400" ] || why="key $(stat -c '%U %a' "$U/key")"
		lsattr "$U/key" 2>/dev/null | grep -q '^[^ ]*i' || why="key not immutable"
	fi
	if [ -z "$why" ]; then
		# entries of 20 KiB: the third is over the user's 48K
		nb p2; wait_entries 2
		nb p3; sleep 0.5
		grep -q 'evicted u65534/' "$T/svc.log" || why="nothing evicted"
	fi
	kill -0 "$SVC_PID" 2>/dev/null || why="${why:-the service died: $(kill -0 "$SVC_PID" 2>&1; wait "$SVC_PID"; echo "status $?")}"
	if [ -z "$why" ]; then
		# an upgrade: the next start drops every user's directory
		rm -f "$D/version"; echo other >"$D/version"
		as_unit "$caps" || { echo "did not restart: $(tail -2 "$T/svc.log")"; return; }
		[ -e "$U" ] && why="an upgrade left $U: $(ls "$U" | paste -sd" ")"
	fi
	kill -0 "$SVC_PID" 2>/dev/null || why="${why:-the service died after the restart}"
	stop_svc
	echo "$why"
}

ALL=
for c in $CAPS; do ALL+=",+$(tr 'A-Z' 'a-z' <<<"${c#CAP_}")"; done
why=$(serve "$ALL")
if [ -z "$why" ]; then
	rt_pass "unit-run: the unit's capabilities and calls serve, evict and wipe"
else
	rt_fail unit-run "$why"
fi
for c in $CAPS; do
	less=${ALL/,+$(tr 'A-Z' 'a-z' <<<"${c#CAP_}")/}
	why=$(serve "$less")
	if [ -n "$why" ]; then
		rt_pass "unit-needs[$c]: without it: $why"
	else
		rt_fail "unit-needs[$c]" "the service did all without it: not needed"
	fi
done
exit 0
