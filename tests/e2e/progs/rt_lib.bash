# Shared helpers of tests/e2e/rt_*.sh (sourced, not a test itself).
# Each rt_*.sh builds its programs once with build/fineibt-cc under
# $BUILD/e2e/runtime/ and loops the cfi= modes in the shell.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
RT_SRC=$ROOT/tests/e2e/progs
RT_OUT=$ROOT/$BUILD/e2e/runtime
FCC=$ROOT/$BUILD/fineibt-cc
FIBT=$ROOT/$BUILD/fineibt
mkdir -p "$RT_OUT"
unset FINEIBT_CFI FINEIBT_VERBOSE FINEIBT_SEQ LD_PRELOAD
# FINEIBT_TEST_SEQ=v6.18 makes v6.18 the set of the modes without a seq=
# word too (RT_MODES below has both sets either way).
[ -n "${FINEIBT_TEST_SEQ:-}" ] && export FINEIBT_SEQ=$FINEIBT_TEST_SEQ

. "$ROOT/tests/e2e/progs/sets.bash"

# The seven modes of the brief; each is also run with ",norand", and each
# in the v6.18 sequence set (",seq=v6.18"; norand does not depend on the
# set, so it is not run twice).
RT_BASE_MODES=(off kcfi fineibt fineibt,paranoid fineibt,bhi fineibt,paranoid,bhi auto)
RT_MODES=()
for m in "${RT_BASE_MODES[@]}"; do RT_MODES+=("$m" "$m,norand"); done
for m in "${RT_BASE_MODES[@]}"; do RT_MODES+=("$m,seq=v6.18"); done

rt_pass() { echo "PASS: $1"; }
rt_fail() { echo "FAIL: $1: $2"; }

# The report's "mode: WORDS" for a cfi= list (as an ERE): its cfi= words
# as the runtime spells them (fi_canon: auto is kcfi, warn and norand and
# seq=v6.18 included).
rt_report_mode() { fi_canon_re "$1"; }

# The mode's checks: its cfi= list without norand and seq=, auto resolved
# (kcfi: the kernel's rule without user IBT, docs/runtime.md).
rt_base() {
	local m
	m=$(fi_no_set "$1")
	m=${m%,norand}
	[ "$m" = auto ] && m=kcfi
	echo "$m"
}
rt_is_off() { [[ $(rt_base "$1") == off ]]; }
# Modes whose caller checks the target's hash: kcfi and paranoid ones.
rt_checks_caller() {
	case $(rt_base "$1") in
	kcfi|fineibt,paranoid|fineibt,paranoid,bhi) return 0 ;;
	esac
	return 1
}
# Modes where a caller jumps to target-16 (FineIBT callers).
rt_is_fineibt() { local m; m=$(rt_base "$1"); [[ $m == fineibt* ]]; }

# rt_run NAME CFI CMD...: runs CMD with FINEIBT_CFI=CFI; sets RT_RC,
# RT_OUT_TXT (stdout) and RT_ERR_TXT (stderr).
rt_run() {
	local name=$1 cfi=$2
	shift 2
	local o=$RT_OUT/$name.out e=$RT_OUT/$name.err
	# The group's own stderr hides bash's "Illegal instruction" notice.
	{ FINEIBT_CFI=$cfi "$@" >"$o" 2>"$e" </dev/null; RT_RC=$?; } 2>/dev/null
	RT_OUT_TXT=$(cat "$o")
	RT_ERR_TXT=$(cat "$e")
}

# rt_build OUT CC-ARGS...: build with fineibt-cc unless OUT is newer than
# the driver, the runtime and every source under progs/.
rt_build() {
	local out=$1
	shift
	if [ -e "$out" ] && [ "$out" -nt "$FCC" ] && \
	   [ "$out" -nt "$ROOT/$BUILD/libfineibt.so" ] && \
	   [ "$out" -nt "$ROOT/$BUILD/libfineibt_crt.a" ] && \
	   [ "$out" -nt "$ROOT/$BUILD/libfineibt.a" ] && \
	   [ -z "$(find "$RT_SRC" -newer "$out" -print -quit)" ]; then
		return 0
	fi
	"$FCC" "$@" -o "$out"
}

RT_REPORT_RE='^fineibt: CFI failure at [^ ]+ \(target: '

# syslog_listen DIR: a datagram listener at DIR/log.sock, standing in for
# the system log: it prints each datagram on one line of DIR/got and stops
# after 20 s (or 2 s with nothing more to read); its pid in lpid, and
# ready when this returns.
syslog_listen() {
	cat >"$1/listen.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("ready", flush=True)
s.settimeout(20)
try:
    while True:
        print(s.recv(8192).decode(errors="replace"), flush=True)
        s.settimeout(2)
except socket.timeout:
    pass
PY
	python3 "$1/listen.py" "$1/log.sock" >"$1/got" 2>"$1/listen.err" &
	lpid=$!
	for _ in $(seq 100); do grep -q ready "$1/got" 2>/dev/null && break; sleep 0.1; done
}
