#!/usr/bin/env bash
# cached_stall: one user's file that never answers does not stop `fineibt
# cached` for every other user. A fill request carries a descriptor of
# the module's file, and the service (root) fstat()s and reads the file
# through it. On a FUSE file system whose server answers the user and
# never root (tests/e2e/progs/fuse_stall.c; an unprivileged user gets one
# with user_allow_other, or with an overlay over FUSE in a user
# namespace, where the service's own FUSE check cannot see it), that
# fstat() waited for ever, uninterruptibly, and the service, which
# reads requests one at a time, filled nothing more for anybody (before:
# another user's entry never came). Now each request is served by a
# child within a deadline; one that overruns is abandoned, and the
# user's next requests are refused while it still hangs.
# Needs root (the service, a FUSE mount), setpriv and /dev/fuse.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"

if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	echo "SKIP: cached_stall: needs /dev/fuse"
	exit 0
fi
cache_setup cached_stall
FS_PID=
fuse_down() {
	# first the server: its exit aborts the connection, and whatever
	# waits on it (the service, before) wakes up
	if [ -n "$FS_PID" ]; then
		kill "$FS_PID" 2>/dev/null
		wait "$FS_PID" 2>/dev/null
	fi
	FS_PID=
	mounted && umount -l "$T/mnt"
}
# not mountpoint(1): root's stat of the file system would wait too
mounted() { grep -q " $T/mnt .* - fuse " /proc/self/mountinfo; }
trap 'fuse_down; cache_cleanup' EXIT
OTHER=(setpriv --reuid=65533 --regid=65533 --clear-groups --inh-caps=-all)
SRC=$RT_SRC/rt_cache.c

{ "$FCC" -O2 -o "$T/rt_cache" "$SRC" -ldl &&
  "$FCC" -O2 -DRT_CACHE_VARIANT=101 -o "$T/rt_cache_v" "$SRC" -ldl &&
  cc -O2 -o "$T/fuse_stall" "$RT_SRC/fuse_stall.c"; } ||
	{ rt_fail build "could not build the programs"; exit 1; }
chmod 755 "$T"/*
mkdir -m 755 "$T/mnt"
"$T/fuse_stall" "$T/mnt" "$T/rt_cache_v" 2>"$T/fs.log" &
FS_PID=$!
for _ in $(seq 100); do
	mounted && break
	sleep 0.05
done
if ! mounted ||
   ! "${NOBODY[@]}" cmp -s "$T/mnt/prog" "$T/rt_cache_v"; then
	echo "SKIP: cached_stall: no FUSE mount here ($(cat "$T/fs.log"))"
	exit 0
fi
start_svc || { rt_fail service "fineibt cached did not start: $(cat "$T/svc.log")"; exit 1; }

entries_of() { ls "$D/u$1" 2>/dev/null | grep -cE '^[0-9a-f]{32}$'; }
# wait_entries UID N SECONDS
wait_entries() {
	for _ in $(seq $(($3 * 10))); do
		[ "$(entries_of "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# nobody runs its program from the FUSE mount: it runs, and asks the
# service to fill the entry of a file the service cannot stat.
out=$(FINEIBT_CFI=kcfi FINEIBT_CACHE=$D timeout 20 "${NOBODY[@]}" "$T/mnt/prog" run 2>&1)
rc=$?
[ $rc = 0 ] && rt_pass "fuse-client: the program on FUSE runs (its server answers nobody)" ||
	rt_fail fuse-client "rc=$rc $out"

# Another user's first start: its entry is filled (the deadline is 10 s).
FINEIBT_CFI=kcfi FINEIBT_CACHE=$D timeout 20 "${OTHER[@]}" "$T/rt_cache" run >/dev/null 2>&1
if wait_entries 65533 1 25 &&
   grep -q "pid [0-9]* (uid 65534): the request did not finish within 10 s" "$T/svc.log"; then
	rt_pass "other-user: filled after the stalled request was abandoned"
else
	rt_fail other-user "entries=$(entries_of 65533) log: $(cat "$T/svc.log")"
fi

# nobody asks again while its first request still hangs: refused at once.
FINEIBT_CFI=kcfi FINEIBT_CACHE=$D timeout 20 "${NOBODY[@]}" "$T/rt_cache" run >/dev/null 2>&1
sleep 1
if grep -q "pid [0-9]* (uid 65534): an earlier request of this user still hangs; ignored" "$T/svc.log" &&
   [ "$(entries_of 65534)" = 0 ]; then
	rt_pass "same-user: refused while its request hangs"
else
	rt_fail same-user "entries=$(entries_of 65534) log: $(cat "$T/svc.log")"
fi

# The server gone, the hung request ends; nobody is served again.
fuse_down
sleep 0.5
FINEIBT_CFI=kcfi FINEIBT_CACHE=$D timeout 20 "${NOBODY[@]}" "$T/rt_cache" run >/dev/null 2>&1
if wait_entries 65534 1 5 && kill -0 "$SVC_PID" 2>/dev/null; then
	rt_pass "recovered: served again once the hung request ended"
else
	rt_fail recovered "entries=$(entries_of 65534) log: $(cat "$T/svc.log")"
fi
