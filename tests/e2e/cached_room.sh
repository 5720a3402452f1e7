#!/usr/bin/env bash
# cached_room: `fineibt cached` on a tmpfs it shares with the system (the
# shipped unit's /run/fineibt is on /run, where systemd and journald keep
# their runtime files) keeps a quarter of that file system free. Before,
# it kept 1 MiB: whenever /run was smaller than the size cap (256M by
# default; /run is a tenth or a fifth of RAM), users' entries filled it to
# its last MiB. Here an 8 MiB tmpfs and nine 1 MiB programs of nobody's
# (the least recently mapped entries are evicted for the later ones):
# before, 1.8 MiB was left (FAIL); now at least 2 MiB. And what the
# service's log says of them (case "log").
# Needs root (the service, mount) and setpriv.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"

room_umount() { mountpoint -q "$T/run" 2>/dev/null && umount "$T/run"; }
CACHE_CLEANUP=room_umount
cache_setup cached_room
rmdir "$D"
mkdir -m 755 "$T/run"
if ! mount -t tmpfs -o size=8m,mode=0755 fineibt-room "$T/run" 2>/dev/null; then
	echo "SKIP: cached_room: cannot mount a tmpfs"
	exit 0
fi
D=$T/run/fineibt

# Nine programs of a little over 1 MiB (a table in .rodata), each its own
# build-id.
for v in 1 2 3 4 5 6 7 8 9; do
	cat >"$T/big$v.c" <<EOF
static const char big[1 << 20] __attribute__((used)) = { $v };
static int f(int x) { return x + big[x & 7]; }
int (*volatile fp)(int) = f;
int main(void) { return fp(0) == $v ? 0 : 1; }
EOF
	"$FCC" -O2 -o "$T/big$v" "$T/big$v.c" ||
		{ rt_fail build "fineibt-cc could not build big$v"; exit 1; }
done
chmod 755 "$T"/big*

start_svc --max-size 64M ||
	{ rt_fail service "fineibt cached did not start: $(cat "$T/svc.log")"; exit 1; }
entries() { ls "$D/u65534" 2>/dev/null | grep -cE '^[0-9a-f]{32}$'; }
free_kib() { df -k --output=avail "$T/run" | tail -1 | tr -d ' '; }

bad=
for v in 1 2 3 4 5 6 7 8 9; do
	n=$(entries)
	FINEIBT_CFI=kcfi FINEIBT_CACHE=$D "${NOBODY[@]}" "$T/big$v" || bad="$bad big$v"
	# filled, or refused: 3 s at most
	for _ in $(seq 30); do
		[ "$(entries)" -gt "$n" ] && break
		grep -q "not filled: no room" "$T/svc.log" && break
		sleep 0.1
	done
done
n=$(entries) free=$(free_kib)
if [ -z "$bad" ] && [ "$n" -ge 3 ] && [ "$free" -ge 2048 ] &&
   grep -qE "evicted u65534/|not filled: no room" "$T/svc.log"; then
	rt_pass "room: $n entries, $free KiB of 8 MiB left free (a quarter kept)"
else
	rt_fail room "failed:$bad entries=$n free=${free} KiB (want >= 2048); $(tail -3 "$T/svc.log")"
fi

# The log (--verbose) names entries by a prefix only, and modules by
# inode: the system log is read by more than root (adm, systemd-journal),
# and a full name opens a copy of a file only its user could read (the
# user's directory cannot be listed); the text's address gave away the
# layout of the process. Before, whole names and addresses.
if grep -qE "^fineibt cached: filled u65534/[0-9a-f]{8}\.\.\. for pid" "$T/svc.log" &&
   ! grep -qE "[0-9a-f]{32}|text [0-9a-f]+-[0-9a-f]+" "$T/svc.log"; then
	rt_pass "log: entries by an 8-digit prefix, modules by inode"
else
	rt_fail log "$(grep -E 'filled|evicted|not filled' "$T/svc.log" | head -3)"
fi
stop_svc
