# shellcheck shell=bash
# The shared text cache's tests (cache.sh, cache_regs.sh): their scratch,
# the service and runs as nobody. Sourced after rt_lib.bash.

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)

# cache_setup NAME: skip unless root with setpriv (the service, chown,
# root's entries); then T (scratch), D (the cache's directory, on
# /dev/shm, 0711), U (nobody's directory in it), removed at exit after
# CACHE_CLEANUP (a command of the test's own, if set).
cache_setup() {
	if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
		echo "SKIP: $1: needs root and setpriv"
		exit 0
	fi
	T=$(mktemp -d)
	D=$(mktemp -d "/dev/shm/fineibt-$1-test.XXXXXX")
	chmod 755 "$T"
	chmod 711 "$D"
	U=$D/u65534
	SVC_PID=
	trap cache_cleanup EXIT
}

stop_svc() {
	if [ -n "$SVC_PID" ]; then
		kill "$SVC_PID" 2>/dev/null
		wait "$SVC_PID" 2>/dev/null
	fi
	SVC_PID=
}

cache_cleanup() {
	stop_svc
	[ -n "${CACHE_CLEANUP:-}" ] && $CACHE_CLEANUP
	# the keys are immutable (the service sets it)
	chattr -i "$D"/u*/key 2>/dev/null
	rm -rf "$T" "$D"
}

# start_svc ARGS...: `fineibt cached` on $D (log in $T/svc.log), until its
# socket is there; 1 if it stopped or never made it.
start_svc() {
	stop_svc
	"$FIBT" cached --dir "$D" --verbose "$@" 2>>"$T/svc.log" &
	SVC_PID=$!
	svc_ready
}

# svc_ready: wait until the service just started as $SVC_PID has its
# socket on $D; 1 if it stopped or never made it.
svc_ready() {
	for _ in $(seq 100); do
		[ -S "$D/sock" ] && return 0
		kill -0 "$SVC_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# The first of nobody's entries.
entry_of() { ls "$U" 2>/dev/null | grep -E '^[0-9a-f]{32}$' | head -1; }

# run_wait NAME CFI CMD...: CMD (a "wait" command of rt_cache) as nobody
# with the cache at $D, cfi CFI,debug, in the background (WPID), reading
# from a fifo, until it has said where its text is; wait_go sends the
# line and waits for it (WRC).
run_wait() {
	local name=$1 cfi=$2
	shift 2
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	FINEIBT_CFI=$cfi,debug FINEIBT_CACHE=$D "${NOBODY[@]}" "$@" \
		<"$T/fifo" >"$T/$name.out" 2>"$T/$name.err" &
	WPID=$!
	exec 9>"$T/fifo"
	for _ in $(seq 100); do
		grep -q '^private' "$T/$name.out" && break
		sleep 0.05
	done
}
wait_go() { echo go >&9; exec 9>&-; wait "$WPID"; WRC=$?; }

# wait_hit NAME MSG CMD...: CMD as nobody with the cache at $D in
# auto,debug, again until its stderr says MSG (the first start makes the
# key and asks, the service fills, a later one maps the entry); 40 tries.
# Output in $T/NAME.out and $T/NAME.err; hit=1 when MSG came.
wait_hit() {
	local name=$1 msg=$2
	shift 2
	hit=
	for _ in $(seq 40); do
		if FINEIBT_CFI=auto,debug FINEIBT_CACHE=$D "${NOBODY[@]}" "$@" \
			>"$T/$name.out" 2>"$T/$name.err" && grep -q "$msg" "$T/$name.err"; then
			hit=1
			return 0
		fi
		sleep 0.1
	done
	return 1
}
