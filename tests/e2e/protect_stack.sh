#!/usr/bin/env bash
# protect_stack (docs/traps.md "Stack use"): the runtime on small stacks.
#  - thread: a thread with a 16 or 32 KiB stack dlopens a kCFI library
#    (rewritten there; the stack scrub that follows must stay inside that
#    stack: it used to wipe 32 KiB below it and crash), calls into it, and
#    makes a confused call: reported and fatal, or continued in warn.
#  - carved: a thread whose 16 KiB stack is a local array of the main
#    thread, right above a canary region, dlopens the kCFI library: the
#    scrub must stop at the thread's stack (libc's bounds), not run down
#    the initial stack's mapping into the main thread's memory.
#  - alt: the handler runs on an alternate signal stack with a canary
#    region right below it (shared memory, checked by the parent after the
#    child's trap): an 8 KiB one (SIGSTKSZ of MINSIGSTKSZ-era code) in
#    every mode, and ones too small for the full report, which must get
#    the one-line report with hex addresses, or the fixed line. The canary
#    is never written; in warn the program continues.
#  - bound: on a 64 KiB alternate stack, the bytes the handler writes
#    beyond the kernel's frame, full report with DWARF and FINEIBT_LOG, are
#    within FI_TRAP_STACK_FULL (src/trap/trap.h, docs/traps.md "Stack use").
. "$(dirname "$0")/progs/protect_common.bash"

ST_OUT=$ROOT/$BUILD/e2e/stack
mkdir -p "$ST_OUT"
PROG=$ST_OUT/stack_prog
LIB=$ST_OUT/libfi_escape_g.so
{ pr_fresh "$PROG" "$PR_SRC/stack_prog.c" ||
  "$FCC" -O2 -Wall "$PR_SRC/stack_prog.c" -o "$PROG" -lpthread; } &&
{ pr_fresh "$LIB" "$PR_SRC/escape_lib.c" ||
  "$FCC" -g -O2 -fPIC -shared "$PR_SRC/escape_lib.c" -o "$LIB"; } ||
	{ pr_fail build "could not build stack_prog"; exit 1; }

FULL=$(sed -n 's/^#define FI_TRAP_STACK_FULL[[:space:]]*\([0-9]*\)$/\1/p' "$ROOT/src/trap/trap.h")
LINE=$(sed -n 's/^#define FI_TRAP_STACK_LINE[[:space:]]*\([0-9]*\)$/\1/p' "$ROOT/src/trap/trap.h")
FRAME=$("$PROG" frame | sed -n 's/^frame //p')
if [ -z "$FULL" ] || [ -z "$LINE" ] || [ -z "$FRAME" ] || [ "$FRAME" = 0 ]; then
	pr_fail setup "FI_TRAP_STACK_FULL='$FULL' FI_TRAP_STACK_LINE='$LINE' frame='$FRAME'"
	exit 1
fi
echo "note: kernel signal frame $FRAME bytes; FI_TRAP_STACK_FULL $FULL, FI_TRAP_STACK_LINE $LINE"

FULL_RE="$PR_REPORT_RE"'twice\+0x0;'
BARE_RE="$PR_REPORT_RE"'0x[0-9a-f]+; .*; small signal stack: no symbols'
TINY_RE='^fineibt: CFI failure \(signal stack too small for a report\)$'

# expect TAG MODE RE: after a confused call, the report RE (none in off);
# fatal: status 132 and nothing after; warn and off: the program went on.
expect() {
	local tag=$1 m=$2 re=$3 out=$4
	case $(fi_no_set "$m") in
	off)
		[ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "$out"$'\nsurvived' ] &&
			! grep -q 'CFI failure' <<<"$PR_ERR_TXT" ;;
	*warn*)
		[ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = "$out"$'\nsurvived' ] &&
			grep -Eq "$re" <<<"$PR_ERR_TXT" ;;
	*)
		[ "$PR_RC" = 132 ] && [ "$PR_OUT_TXT" = "$out" ] &&
			grep -Eq "$re" <<<"$PR_ERR_TXT" ;;
	esac || { pr_fail "$tag" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"; return 1; }
	pr_pass "$tag"
}

MODES="kcfi kcfi,norand fineibt fineibt,bhi fineibt,paranoid auto auto,warn fineibt,bhi,warn off"

for kib in 16 32; do
	for m in $MODES; do
		pr_run thread "$m" "$PROG" thread "$LIB" "$kib"
		expect "thread[$kib KiB,$m]: dlopen, scrub and trap on the thread's stack" \
			"$m" "$FULL_RE" "dl ok"
	done
done

for m in kcfi auto fineibt,bhi auto,warn; do
	pr_run carved "$m" "$PROG" carved "$LIB" 16
	if [ "$PR_RC" = 0 ] && [ "$PR_OUT_TXT" = $'dl ok\ncanary ok' ]; then
		pr_pass "carved[16 KiB,$m]: the scrub stays inside a thread stack carved out of main's"
	else
		pr_fail "carved[16 KiB,$m]" "rc=$PR_RC out='$PR_OUT_TXT' err='${PR_ERR_TXT:0:300}'"
	fi
done

# alt_case TAG MODE SIZE RE [ENV...]: the child traps on a SIZE-byte
# alternate stack; report RE, canary intact. Sets USED (bytes written).
alt_case() {
	local tag=$1 m=$2 size=$3 re=$4 line
	shift 4
	pr_run alt "$m" env "$@" "$PROG" alt "$LIB" "$size"
	line=${PR_OUT_TXT##*$'\n'}
	USED=$(sed -n 's/^rc [0-9]* frame [0-9]* used \([0-9]*\) .*/\1/p' <<<"$line")
	PR_RC=$(sed -n 's/^rc \([0-9]*\) .*/\1/p' <<<"$line")
	PR_OUT_TXT=${PR_OUT_TXT%$'\n'*}
	if [[ $line != *" canary ok" ]]; then
		pr_fail "$tag" "the handler wrote below its alternate stack: '$line'"
		return 1
	fi
	expect "$tag: canary intact" "$m" "$re" "dl ok"
}

# 8 KiB: the full report where the kernel's frame leaves FI_TRAP_STACK_FULL.
re8=$FULL_RE
[ $((8192 - FRAME)) -ge "$FULL" ] || re8=$BARE_RE
for m in $(fi_with_sets $MODES); do	# both sequence sets
	alt_case "alt[8 KiB,$m]" "$m" 8192 "$re8" FINEIBT_LOG="$ST_OUT/alt.log"
done

# Too small for the full report: the one-line report, then the fixed line.
for m in kcfi auto fineibt,bhi,warn auto,warn; do
	alt_case "alt[frame+$((FULL - 256)),$m]: one line, hex" "$m" \
		$((FRAME + FULL - 256)) "$BARE_RE"
	alt_case "alt[frame+$((LINE - 256)),$m]: the fixed line" "$m" \
		$((FRAME + LINE - 256)) "$TINY_RE"
done

# bound: what the full report writes, in each kind of trap, with DWARF
# line and FINEIBT_LOG; and what the one-line report writes.
for m in $(fi_with_sets kcfi fineibt fineibt,bhi fineibt,paranoid auto,warn); do
	alt_case "bound[$m]" "$m" 65536 "$FULL_RE" FINEIBT_LOG="$ST_OUT/bound.log" || continue
	echo "note: bound[$m]: full report: $((USED - FRAME)) bytes beyond the kernel's frame"
	if [ -n "$USED" ] && [ $((USED - FRAME)) -le "$FULL" ]; then
		pr_pass "bound[$m]: full report within FI_TRAP_STACK_FULL ($((USED - FRAME)) <= $FULL)"
	else
		pr_fail "bound[$m]" "full report used $((USED - FRAME)) > $FULL bytes"
	fi
	alt_case "bound-line[$m]" "$m" $((FRAME + FULL - 256)) "$BARE_RE" || continue
	if [ $((USED - FRAME)) -le "$LINE" ]; then
		pr_pass "bound-line[$m]: one-line report within FI_TRAP_STACK_LINE ($((USED - FRAME)) <= $LINE)"
	else
		pr_fail "bound-line[$m]" "one-line report used $((USED - FRAME)) > $LINE bytes"
	fi
done
