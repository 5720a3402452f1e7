#!/usr/bin/env bash
# protect_trust (docs/protection.md, "Writing the state through the
# kernel"): nothing the runtime trusts is writable while
# another thread runs. tests/e2e/progs/trust_prog.c parks the runtime's
# writer inside every window, before every put of a record built in
# scratch and inside every check of one (the test build's hook,
# tests/lib/rtdebug.c), while an attacker thread that knows every address
# (the state and its owner token, the arena: module records, JIT and
# compiled-trap records; the veneer names; through them the module and
# JIT tables, the veneer base, libc's saved entry points, the SIGILL
# record, the seed) writes forged values and values saved at earlier parks
# with process_vm_writev. The program installs a SIGILL handler of its own
# (exit 3 "swallowed" if a CFI trap ever reaches it); at the end it makes a
# type-confused call.
#   state     every store refused (landed 0), the confused call reported
#             and fatal (132)
#   scratch   the attacker also sets warn in each module record the writer
#             is about to put: the stores land in the scratch, the record
#             is refused where it landed ("cannot register (Bad message)"),
#             the library's confused call is fatal all the same ("not
#             registered")
#   seen      the attacker empties the kCFI range of each scan record about
#             to be put: the check of the record stops the process (127)
#   fork      the race in a forked child (its own descriptors: the
#             parent's state unchanged), then in the parent
#   windows   FINEIBT_TEST_NOPROCMEM=1 (the test build pretends
#             /proc/self/mem cannot be opened): the runtime says so and
#             falls back to write windows; the same attacker lands stores
#             then (the control: it sees writable memory when there is
#             some); without an attacker (none) the confused call stays
#             fatal
# In auto, kcfi and fineibt,paranoid,bhi, shared runtime and
# -static-fineibt. Written through windows (the design before, the
# fallback now: case windows), the state takes the same attacker's stores.
. "$(dirname "$0")/progs/protect_common.bash"

T_OUT=$ROOT/$BUILD/e2e/trust
mkdir -p "$T_OUT"
SRC=$PR_SRC/trust_prog.c
PROG=$T_OUT/trust_prog
PROG_STATIC=$T_OUT/trust_prog_static
TLIB=$T_OUT/libfi_trust.so
INC="-I$ROOT/include $(printf -- '-I%s ' "$ROOT"/src/*/)"
# Named by soname (FINEIBT_CC_RUNPATH=1): the shared cases run against the
# test library (its fi_rt_park hook) through LD_LIBRARY_PATH.
{ pr_fresh "$PROG" "$SRC" ||
  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -Wall $INC "$SRC" -o "$PROG" -ldl -lpthread; } &&
{ pr_fresh "$PROG_STATIC" "$SRC" "$PR_TESTLIB/rtdebug.o" ||
  "$FCC" -O2 -Wall -static-fineibt $INC "$SRC" "$PR_TESTLIB/rtdebug.o" \
	-o "$PROG_STATIC" -ldl -lpthread; } &&
{ pr_fresh "$TLIB" "$PR_SRC/escape_lib.c" ||
  FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -fPIC -shared "$PR_SRC/escape_lib.c" -o "$TLIB"; } ||
	{ pr_fail build "could not build trust_prog"; exit 1; }

# t_run NAME MODE ATTACK PROG...: runs the program (shared: against the
# test build of the runtime; static: rtdebug.o is linked in).
t_run() {
	local name=$1 m=$2 attack=$3 kind=$4
	shift 4
	if [ "$kind" = static ]; then
		pr_run "$name" "$m" env TRUST_LINKED=1 "$@" "$PROG_STATIC" "$attack" "$TLIB" noveneer
	else
		pr_run "$name" "$m" env "$PR_DEBUG_ENV" "$@" "$PROG" "$attack" "$TLIB"
	fi
}

LANDED0='^landed 0 scratch [0-9]+ parks [1-9][0-9]* how 1$'
for kind in shared static; do
	for m in auto kcfi fineibt,paranoid,bhi; do
		tag="$m,$kind"
		t_run state "$m" state "$kind"
		if [ "$PR_RC" = 132 ] && grep -q '^dl ok$' <<<"$PR_OUT_TXT" &&
		   grep -Eq "$LANDED0" <<<"$PR_OUT_TXT" &&
		   ! grep -q 'swallowed\|survived\|attacker\|landed$' <<<"$PR_OUT_TXT" &&
		   grep -Eq "$PR_REPORT_RE" <<<"$PR_ERR_TXT"; then
			pr_pass "state[$tag]: no store landed in $(grep -o 'parks [0-9]*' <<<"$PR_OUT_TXT"), the confused call fatal"
		else
			pr_fail "state[$tag]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi

		t_run scratch "$m" scratch "$kind"
		if [ "$PR_RC" = 132 ] && grep -Eq '^landed 0 scratch [1-9]' <<<"$PR_OUT_TXT" &&
		   ! grep -q 'swallowed\|survived\|attacker\|landed$' <<<"$PR_OUT_TXT" &&
		   grep -q 'libfi_trust.so: cannot register (Bad message)' <<<"$PR_ERR_TXT" &&
		   grep -q 'in rewritten code of a module that is not registered' <<<"$PR_ERR_TXT"; then
			pr_pass "scratch[$tag]: forged records refused where they landed, the confused call fatal"
		else
			pr_fail "scratch[$tag]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi

		t_run seen "$m" seen "$kind"
		if [ "$PR_RC" = 127 ] && ! grep -q 'swallowed\|survived\|attacker' <<<"$PR_OUT_TXT" &&
		   grep -q "^fineibt: fatal: a module's record changed while it was written" <<<"$PR_ERR_TXT"; then
			pr_pass "seen[$tag]: a forged scan record stops the process"
		else
			pr_fail "seen[$tag]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi

		t_run fork "$m" fork "$kind"
		if [ "$PR_RC" = 132 ] && grep -q '^child signal 4$' <<<"$PR_OUT_TXT" &&
		   grep -q '^parent state unchanged$' <<<"$PR_OUT_TXT" &&
		   [ "$(grep -Ec "$LANDED0" <<<"$PR_OUT_TXT")" = 2 ] &&
		   ! grep -q 'swallowed\|survived\|attacker\|landed$' <<<"$PR_OUT_TXT" &&
		   [ "$(grep -Ec "$PR_REPORT_RE" <<<"$PR_ERR_TXT")" = 2 ]; then
			pr_pass "fork[$tag]: the child's windows wrote its own state; no store landed in either; both confused calls fatal"
		else
			pr_fail "fork[$tag]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
		fi
	done
	# The fallback, and the attacker's control.
	t_run windows auto state "$kind" FINEIBT_TEST_NOPROCMEM=1 FINEIBT_VERBOSE=1
	if grep -q '^a store landed$' <<<"$PR_OUT_TXT" &&
	   grep -q '^fineibt: the runtime state is written through windows' <<<"$PR_ERR_TXT"; then
		pr_pass "windows[$kind]: without /proc/self/mem, said, and the attacker's stores land (control)"
	else
		pr_fail "windows[$kind]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
	t_run windows-none auto none "$kind" FINEIBT_TEST_NOPROCMEM=1
	if [ "$PR_RC" = 132 ] && grep -Eq '^landed 0 scratch 0 parks 0 how 2$' <<<"$PR_OUT_TXT" &&
	   grep -Eq "$PR_REPORT_RE" <<<"$PR_ERR_TXT"; then
		pr_pass "windows-none[$kind]: the fallback's windows work: every kind opened, the confused call fatal"
	else
		pr_fail "windows-none[$kind]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done
