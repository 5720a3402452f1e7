#!/usr/bin/env bash
# protect_key: the process's rehash key lives only in the read-only runtime
# state (and the read-only copies of the modules rewritten with it). It is
# in no writable memory, not in the environment, and not in the
# environment a child inherits.
#
# How, without a hook that would hand the key to the program: an outside
# observer (protect_scan, a plain program, not a fineibt process) reads 8
# (compile-time, run-time) hash pairs the way inspecting a running process
# would (the file's preambles, the process's text), then tests every
# 4-byte aligned 16 bytes of every readable mapping of the stopped program
# as the key (and, in writable mappings, as the start of a SipHash state
# derived from it): at least one hit in a read-only mapping (the state:
# shows the scan works), none in a writable one. The program first walks
# every path that touches the key: start-up, JIT rehash/emit/register,
# fineibt_get_config, dlopen of a kCFI library (a write window), dlopen of
# a copy of it from a thread with a 32 KiB stack (the stack scrub fits
# that stack, and still wipes it), and spawns /usr/bin/env (what a child
# inherits; scanned too, with /proc/PID/environ, raw and in hex).
#
# False positives: a chance match of 8 pairs has probability 2^-256 per
# place; none. A leak repeats with every fresh key, so a process with rw
# hits is still retried once with a new key, and only a second hit fails.
. "$(dirname "$0")/progs/protect_common.bash"

pr_build || { pr_fail build "could not build the protect programs"; exit 1; }
LIB2=$PR_OUT/libfi_protect_copy.so
cp "$LIB" "$LIB2"

# scan_once CFI PROG: runs PROG key, scans it; sets SCAN_TXT, SCAN_OK.
scan_once() {
	local m=$1 prog=$2 envout=$PR_OUT/child-env.txt line
	rm -f "$envout"
	coproc PR_P { FINEIBT_CFI=$m exec "${PREFIX[@]}" "$prog" key "$LIB" "$envout" "$LIB2" 2>&1; }
	SCAN_OK=false SCAN_TXT=""
	if read -r -t 20 line <&"${PR_P[0]}" && [ "$line" = ready ]; then
		SCAN_TXT=$("$SCAN" "$PR_P_PID" "$prog" "$envout" 2>&1) && SCAN_OK=true
	else
		SCAN_TXT="program said '$line'"
	fi
	echo go >&"${PR_P[1]}" 2>/dev/null
	wait "$PR_P_PID" 2>/dev/null
}

count() { sed -n "s/^$1 //p" <<<"$SCAN_TXT"; }
PREFIX=()	# a command the program runs under (seccomp_deny, below)

check_key() {
	local m=$1 prog=$2 tag="key[$1,${2##*/}${PREFIX:+,nomincore}]" try
	for try in 1 2; do
		scan_once "$m" "$prog"
		$SCAN_OK || break
		[ "$(count key-rw)" = 0 ] && break
	done
	if ! $SCAN_OK; then
		pr_fail "$tag" "scan failed: $SCAN_TXT"
		return
	fi
	if [ "$(count key-ro)" -ge 1 ]; then
		pr_pass "$tag: found by the observer in read-only memory only"
	else
		pr_fail "$tag" "not found in the read-only state (scan broken?): $SCAN_TXT"
	fi
	if [ "$(count key-rw)" = 0 ]; then
		pr_pass "$tag: in no writable mapping"
	else
		pr_fail "$tag" "in writable memory (twice, two keys): $SCAN_TXT"
	fi
	if [ "$(count key-env)" = 0 ] && [ -s "$PR_OUT/child-env.txt" ]; then
		pr_pass "$tag: not in the environment nor in a child's"
	else
		pr_fail "$tag" "environment: $SCAN_TXT"
	fi
}

for m in $(fi_with_sets auto kcfi fineibt fineibt,bhi fineibt,paranoid,bhi,warn); do
	check_key "$m" "$PROG"
done
for m in $(fi_with_sets auto fineibt,bhi); do
	check_key "$m" "$PROG_STATIC"
done
# mincore refused (EPERM: a unit's SystemCallFilter= without it, as
# systemd 252's @system-service): the stack scrub cannot tell which pages
# exist, and must wipe them all rather than none.
DENY=$PR_OUT/seccomp_deny
if cc -O1 -o "$DENY" "$PR_SRC/seccomp_deny.c"; then
	PREFIX=("$DENY" "$(printf '#include <sys/syscall.h>\nSYS_mincore\n' | cc -E -P - | tail -1)")
	for m in auto fineibt,paranoid; do
		check_key "$m" "$PROG"
	done
	PREFIX=()
else
	pr_fail "key[nomincore]" "could not build seccomp_deny"
fi
