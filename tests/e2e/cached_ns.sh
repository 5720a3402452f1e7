#!/usr/bin/env bash
# cached_ns: `fineibt cached` with a --dir that is not on tmpfs mounts a
# tmpfs of its own there, which other processes see only if the service
# shares their mount namespace. A service in a namespace of its own (a
# systemd unit with ProtectSystem= has one) refuses such a --dir with one
# line instead of serving a cache nobody else can see (before, it served
# it, and every process rewrote its text privately: "not on tmpfs").
# Here a PID namespace gives the test a pid 1 of its own to compare with:
# the service in pid 1's mount namespace mounts and serves; one in a
# mount namespace of its own is refused. And a refused --dir the service
# created is removed again. Needs root and unshare(1).
set -u
BUILD=${BUILD:-build}
FIBT=$PWD/$BUILD/fineibt
if [ "$(id -u)" != 0 ] || ! unshare -p -f -m --mount-proc true 2>/dev/null; then
	echo "SKIP: cached_ns: needs root and unshare -p -m"
	exit 0
fi
D=$(mktemp -d "$PWD/$BUILD/cached_ns.XXXXXX")
chmod 711 "$D"
if [ "$(stat -f -c %T "$D")" = tmpfs ]; then
	echo "SKIP: cached_ns: $BUILD is on tmpfs"
	rmdir "$D"
	exit 0
fi

# refused NAME WRAPPER MESSAGE: the service started in a mount namespace
# of its own (through WRAPPER, a command word list) refuses its --dir: one
# line MESSAGE, exit 1, nothing mounted.
refused() {
	local name=$1 wrap=$2 msg=$3 out
	out=$(timeout 20 unshare -p -f -m --mount-proc sh -c \
		"unshare -m --propagation slave $wrap \"\$1\" cached --dir \"\$2\" 2>&1; echo \"rc=\$?\"" \
		sh "$FIBT" "$D")
	if grep -q '^rc=1$' <<<"$out" &&
	   [ "$(grep -c . <<<"$out")" = 2 ] &&
	   grep -q "^fineibt: error: cached: $D is not on tmpfs, and $msg" <<<"$out" &&
	   ! mountpoint -q "$D"; then
		echo "PASS: $name: refused"
	else
		echo "FAIL: $name: $out"
	fi
}

# Its own mount namespace.
refused own-namespace "" "a tmpfs mounted there by this service would not be seen by other processes"

# pid 1's namespace: it mounts its tmpfs and serves (stopped once its
# socket is there).
out=$(timeout 20 unshare -p -f -m --mount-proc sh -c '
	"$1" cached --dir "$2" 2>/dev/null & svc=$!
	for _ in $(seq 100); do [ -S "$2/sock" ] && break; sleep 0.1; done
	[ -S "$2/sock" ] && stat -f -c %T "$2"
	kill $svc; wait $svc 2>/dev/null; true' sh "$FIBT" "$D")
if [ "$out" = tmpfs ]; then
	echo "PASS: init-namespace: a tmpfs mounted and served"
else
	echo "FAIL: init-namespace: '$out'"
fi

# A pid 1 whose namespace the service may not read (here: the service
# without CAP_SYS_PTRACE, pid 1 with it; seen as root on a host whose
# pid 1 is a sandbox's): it cannot tell, so it refuses, one line, exit 1,
# nothing mounted. It used to take "cannot tell" for "the same" and serve
# a tmpfs that only its own namespace saw.
if command -v setpriv >/dev/null 2>&1; then
	refused "unreadable pid 1" "setpriv --bounding-set=-sys_ptrace" \
		"whether a tmpfs mounted there would be seen by other processes cannot be told (/proc/1/ns/mnt and the parent.s: Permission denied)"
fi

# --no-mount and a --dir that did not exist: refused, and the directory
# it made for the check is gone again (before, it stayed behind).
out=$("$FIBT" cached --no-mount --dir "$D/new" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q 'is not on tmpfs (--no-mount): refused' <<<"$out" &&
   [ ! -e "$D/new" ]; then
	echo "PASS: no-mount: refused, nothing left"
else
	echo "FAIL: no-mount: rc=$rc $out; $(ls -d "$D/new" 2>&1)"
fi
rmdir "$D/new" "$D" 2>/dev/null
exit 0
