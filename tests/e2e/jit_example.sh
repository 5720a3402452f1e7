#!/usr/bin/env bash
# jit: the JIT example (examples/jit/calc, built with fineibt-cc) in every
# mode. Generated functions are called from instrumented C through function
# pointers and call back into C through checked call sites; their results
# must equal the C interpreter's over a grid of arguments, and their hash
# and arity must read back. A type-confused call into JIT code and one out
# of it must be caught (exit status 132 = SIGILL) with a report naming the
# JIT address (into: the target; out of: the trapping site, for the modes
# whose check sits in the caller), and with warn be reported and survived.
# cfi=off runs the confused call into JIT code unchecked, as it should.
set -u
cd "${FINEIBT_ROOT:-.}"
ROOT=$PWD
. "$ROOT/tests/e2e/progs/sets.bash"	# fi_with_sets: both sequence sets
BUILD=${BUILD:-build}
case $BUILD in /*) ABS_BUILD=$BUILD ;; *) ABS_BUILD=$ROOT/$BUILD ;; esac
OUT=$ABS_BUILD/e2e/jit_example
CALC=$OUT/calc

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

mkdir -p "$OUT" || exit 1
if ! make -s -C examples/jit BUILD="$ABS_BUILD" ROOT="$ROOT" OUT="$OUT" \
	>"$OUT/build.log" 2>&1; then
	fail jit_build "$(tail -n 5 "$OUT/build.log")"
	exit 1
fi
pass jit_build

# run NAME CFI ARGS...: run calc; output in $OUT/NAME.{out,err}, status in $rc.
run() {
	local name=$1 cfi=$2; shift 2
	# The subshell keeps bash's "Illegal instruction" notice out of the log.
	(FINEIBT_CFI=$cfi "$CALC" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" \
		</dev/null; exit $?) 2>/dev/null
	rc=$?
}

# The hex addresses on a line as decimal-comparable numbers.
in_region() {	# in_region ADDR LO HI
	local a=$(($1)) lo=$(($2)) hi=$(($3))
	[ "$a" -ge "$lo" ] && [ "$a" -lt "$hi" ]
}

# mode -> the sequences it writes (auto: kcfi, the kernel's rule without
# user IBT), for whether the arity survives in the preamble (plain FineIBT
# loses it: read back as 0) and which check fails. Reports name the mode
# by its cfi= words (fi_canon).
declare -A report=(
	[kcfi]=kcfi [kcfi,norand]=kcfi [fineibt]=fineibt [fineibt,norand]=fineibt
	[fineibt,paranoid]=paranoid [fineibt,paranoid,norand]=paranoid
	[fineibt,bhi]=bhi [fineibt,bhi,norand]=bhi
	[fineibt,paranoid,bhi]=paranoid+bhi [auto]=kcfi [auto,norand]=kcfi
	[off]=off
)
modes="kcfi kcfi,norand fineibt fineibt,norand fineibt,paranoid
	fineibt,paranoid,norand fineibt,bhi fineibt,bhi,norand
	fineibt,paranoid,bhi auto auto,norand off"
# The JIT writes the process's sequence set: every mode again in v6.18.
modes="$modes $(fi_with_sets kcfi fineibt fineibt,paranoid fineibt,bhi \
	fineibt,paranoid,bhi auto off | grep seq=)"
# rep MODE: the mode the report names (without the set)
rep() { echo "${report[$(fi_no_set "$1")]}"; }

for m in $modes; do
	t=jit_run_${m//,/_}
	run "$t" "$m" run
	o=$OUT/$t.out
	if [ "$rc" = 0 ] && grep -q '^ok: 252 checks$' "$o"; then
		pass "$t"
	else
		fail "$t" "status $rc: $(tail -n 3 "$o" "$OUT/$t.err" | tr '\n' ' ')"
		continue
	fi
	# Arity read back: 1 for x*x+3, 2 for the others; 0 in plain FineIBT.
	case $(rep "$m") in fineibt | paranoid) a1=0 a2=0 ;; *) a1=1 a2=2 ;; esac
	got=$(awk '/^jit: .* arity /{ print $NF }' "$o" | tr '\n' ' ')
	if [ "$got" = "$a1 $a2 $a2 $a2 " ]; then
		pass "${t}_arity"
	else
		fail "${t}_arity" "read back '$got', want '$a1 $a2 $a2 $a2 '"
	fi
	# norand: hashes are the compiler's, the same in every mode.
	h=$(sed -n 's/^types: long(long) \(0x[0-9a-f]*\).*/\1/p' "$o")
	case $m in
	*norand* | off) echo "$h" >>"$OUT/norand.hashes" ;;
	esac
done
if [ "$(sort -u "$OUT/norand.hashes" | wc -l)" = 1 ]; then
	pass jit_norand_hash_is_compile_time
else
	fail jit_norand_hash_is_compile_time "$(sort -u "$OUT/norand.hashes" | tr '\n' ' ')"
fi
rm -f "$OUT/norand.hashes"

run jit_expr kcfi "x * y - f(3)" 6 7
if [ "$rc" = 0 ] && [ "$(tail -n 1 "$OUT/jit_expr.out")" = 35 ]; then
	pass jit_expr
else
	fail jit_expr "status $rc, printed '$(tail -n 1 "$OUT/jit_expr.out")'"
fi

# Confused calls, fatal: SIGILL and a report naming the JIT address.
for m in $modes; do
	[ "$(fi_no_set "$m")" = off ] && continue
	t=jit_confused_in_${m//,/_}
	run "$t" "$m" confused-in
	fn=$(sed -n 's/^confused-in: calling \(0x[0-9a-f]*\).*/\1/p' "$OUT/$t.out")
	line=$(grep 'CFI failure' "$OUT/$t.err")
	if [ "$rc" = 132 ] && [ -n "$fn" ] &&
	   [[ $line == *"(target: $fn; "* ]] &&
	   [[ $line == *"mode: $(fi_canon "$m"))"* ]] &&
	   ! grep -q '^confused-in: returned' "$OUT/$t.out"; then
		pass "$t"
	else
		fail "$t" "status $rc, fn '$fn', report '$line'"
	fi

	t=jit_confused_out_${m//,/_}
	run "$t" "$m" confused-out
	read -r lo hi < <(sed -n 's/^jit: region \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\1 \2/p' \
			  "$OUT/$t.out")
	line=$(grep 'CFI failure' "$OUT/$t.err")
	at=$(echo "$line" | sed -n 's/.*CFI failure at \([^ ]*\) .*/\1/p')
	ok=1
	[ "$rc" = 132 ] || ok=0
	[[ $line == *"(target: pair+0x0; "* ]] || ok=0
	[[ $line == *"mode: $(fi_canon "$m"))"* ]] || ok=0
	case $(rep "$m") in
	kcfi | paranoid | paranoid+bhi)
		# The check that failed is the JIT's own call site.
		{ [[ $at == 0x* ]] && [ -n "${lo:-}" ] && in_region "$at" "$lo" "$hi"; } || ok=0 ;;
	esac
	if [ "$ok" = 1 ]; then
		pass "$t"
	else
		fail "$t" "status $rc, region ${lo:-?}-${hi:-?}, report '$line'"
	fi
done

# cfi=off: no check runs, the confused call goes through.
run jit_confused_in_off off confused-in
if [ "$rc" = 0 ] && grep -q '^confused-in: returned' "$OUT/jit_confused_in_off.out" &&
   ! grep -q 'CFI failure' "$OUT/jit_confused_in_off.err"; then
	pass jit_confused_in_off_unchecked
else
	fail jit_confused_in_off_unchecked "status $rc"
fi

# warn: reported, then the call proceeds and the program finishes. Under
# paranoid the caller's report is the only one: the callee's preamble
# check is not reported a second time (the kernel prints both).
for m in $(fi_with_sets kcfi,warn fineibt,warn fineibt,paranoid,warn fineibt,bhi,warn); do
	for what in confused-in confused-out; do
		t=jit_${what//-/_}_${m//,/_}
		run "$t" "$m" "$what"
		nrep=1
		if [ "$rc" = 0 ] && grep -q "^$what: returned" "$OUT/$t.out" &&
		   [ "$(grep -cE 'CFI failure.*mode: [^)]*,warn[,)]' "$OUT/$t.err")" = "$nrep" ]; then
			pass "$t"
		else
			fail "$t" "status $rc: $(cat "$OUT/$t.err")"
		fi
	done
done
