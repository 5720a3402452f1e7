#!/usr/bin/env bash
# real_gawk_time: the gawk module's shlib run (scripts/real/progs/gawk.sh)
# against a stand-in test directory, no gawk needed. Upstream's time test
# prints "gettimeofday - systime = 1" when gettimeofday() lands in the few
# ms after a second boundary where time() still says the previous second
# (the plain clang-22 build does it too; ~0.7% of shlib runs): that one
# difference gets one more try of the time test, and the run's output and
# status are then those of a clean run. A second such failure, any other
# difference in _time (the oversleep warning) and a failure of another
# test stay failures.
set -u
cd "${FINEIBT_ROOT:-$(dirname "$0")/../..}" || exit 1
root=$PWD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
nfail=0
ok() { echo "PASS: $1"; }
bad() { echo "FAIL: $1: $2"; nfail=$((nfail + 1)); }

W='gawk: time.awk:2: warning: The time extension is obsolete.'
GOOD="$W
gettimeofday - systime = 0
sleep(1.3) = 0
gettimeofday - systime = 0"

# mk DIR TRY1 TRY2 OTHER: a tree whose time test writes TRY1, then TRY2
# (as _time), and whose other test "ordchr" passes unless OTHER=1.
mk() {
	local d=$1/t/test
	mkdir -p "$d"
	printf '%s\n' "$GOOD" >"$d/time.ok"
	printf '%s\n' "$2" >"$d/try1"
	printf '%s\n' "$3" >"$d/try2"
	echo ok >"$d/ordchr.ok"
	if [ "$4" = 1 ]; then echo bad >"$d/ordchr.out"; else echo ok >"$d/ordchr.out"; fi
	# the rules as upstream writes them (cmp, then rm on success)
	cat >"$d/Makefile" <<'EOF'
shlib-msg-start:
	@echo "======== Starting shared library tests ========"
shlib-tests: ordchr time
shlib-msg-end:
	@echo "======== Done with shared library tests ========"
ordchr:
	@echo $@
	@-cp ordchr.out _$@
	@-cmp ./$@.ok _$@ && rm -f _$@
time:
	@echo $@
	@-n=$$(cat tries 2>/dev/null || echo 0); n=$$((n + 1)); echo $$n >tries; cp try$$n _$@
	@-cmp ./$@.ok _$@ && rm -f _$@
pass-fail:
	@COUNT=`ls _* 2>/dev/null | wc -l` ; \
	if test $$COUNT = 0 ; \
	then	echo ALL TESTS PASSED ; \
	else	echo $$COUNT TESTS FAILED ; exit 1; \
	fi
.PHONY: shlib-tests ordchr time
EOF
}

# run NAME TRY1 TRY2 OTHER: gawk.sh's run_test shlib in a scratch dir;
# sets OUT, RC and TRIES (how often the time test ran).
run() {
	local d=$T/$1
	mkdir -p "$d/src" "$d/scratch"
	mk "$d/src" "$2" "$3" "$4"
	OUT=$(cd "$d/scratch" && bash -c '. "$1"; run_test shlib "$2/t"' _ \
		"$root/scripts/real/progs/gawk.sh" "$d/src" 2>&1)
	RC=$?
	TRIES=$(cat "$d/scratch/t/test/tries" 2>/dev/null || echo 0)
}

run clean "$GOOD" "$GOOD" 0
CLEAN=$OUT
if [ "$RC" = 0 ] && [ "$TRIES" = 1 ] && grep -q 'ALL TESTS PASSED' <<<"$OUT"; then
	ok "clean run: passes, time run once"
else
	bad "clean run" "rc=$RC tries=$TRIES out='$OUT'"
fi

RACE1="$W
gettimeofday - systime = 1
sleep(1.3) = 0
gettimeofday - systime = 0"
RACE2="$W
gettimeofday - systime = 0
sleep(1.3) = 0
gettimeofday - systime = 1"
for r in 1 2; do
	v=RACE$r
	run race$r "${!v}" "$GOOD" 0
	if [ "$RC" = 0 ] && [ "$TRIES" = 2 ] && [ "$OUT" = "$CLEAN" ]; then
		ok "time race (timecheck $r): one more try, output of a clean run"
	else
		bad "time race (timecheck $r)" "rc=$RC tries=$TRIES out='$OUT'"
	fi
done

run twice "$RACE1" "$RACE1" 0
if [ "$RC" != 0 ] && [ "$TRIES" = 2 ] && grep -q '1 TESTS FAILED' <<<"$OUT"; then
	ok "time race twice: fails"
else
	bad "time race twice" "rc=$RC tries=$TRIES out='$OUT'"
fi

run oversleep "$GOOD
Warning: tried to sleep 1.30 secs, but slept for 2.10 secs" "$GOOD" 0
if [ "$RC" != 0 ] && [ "$TRIES" = 1 ] && grep -q 'time\.ok' <<<"$OUT"; then
	ok "other difference in _time: no retry, fails"
else
	bad "other difference in _time" "rc=$RC tries=$TRIES out='$OUT'"
fi

run other "$RACE1" "$GOOD" 1
if [ "$RC" != 0 ] && grep -q '1 TESTS FAILED' <<<"$OUT" && grep -q '_ordchr differ' <<<"$OUT"; then
	ok "another test failing: still fails after the time retry"
else
	bad "another test failing" "rc=$RC tries=$TRIES out='$OUT'"
fi
exit $((nfail > 0))
