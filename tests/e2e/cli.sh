#!/usr/bin/env bash
# The CLI's one parser and one message format (man/fineibt.1, EXIT
# STATUS): every command's unknown option, missing argument, bad value
# and missing or extra operand is a usage error: exit 2, one line
#   fineibt: error: CMD: WHAT; try 'fineibt help CMD'
# on stderr, nothing on stdout; a failure is exit 1 with one
# "fineibt: error: " line. --help and `help CMD` print the same usage.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
FI=$ROOT/$BUILD/fineibt
OUT=$ROOT/$BUILD/e2e/cli
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

# usage NAME WHAT-ERE ARGS...: exit 2, one line naming the command
usage() {
	local name=$1 what=$2 cmd rc
	shift 2
	cmd=${1:-}
	"$FI" "$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	local want="^fineibt: error: $cmd: $what; try 'fineibt help $cmd'\$"
	if [ $rc = 2 ] && [ ! -s "$OUT/out" ] && [ "$(wc -l <"$OUT/err")" = 1 ] &&
	   grep -Eq "$want" "$OUT/err"; then
		pass "$name"
	else
		fail "$name" "rc=$rc out=$(head -c 100 "$OUT/out") err=$(cat "$OUT/err")"
	fi
}
F=$OUT/nothing-here
usage patch-unknown-option "unknown option '--bogus'" patch x -o y --bogus
usage patch-unknown-short "unknown option '-Z'" patch x -o y -Z
usage patch-missing-arg "option '-o' needs an argument" patch x -o
usage patch-missing-long-arg "option '--cfi' needs an argument" patch x -o y --cfi
usage patch-flag-with-value "option '--quiet' takes no argument" patch x -o y --quiet=1
usage patch-no-file "no FILE" patch
usage patch-two-files "one FILE at a time" patch a b -o y
usage patch-no-output "no -o OUT \(or --in-place\)" patch x
# Both: it wrote OUT and left FILE as it was, which --in-place asks to replace.
usage patch-in-place-and-output "-o OUT and --in-place do not go together" patch x -o y --in-place
usage patch-bad-cfi "--cfi: unknown word 'bogus' \(valid: auto, off, kcfi, fineibt, paranoid, bhi, norand, warn, debug, seq=v4\|v6.18, help\)" patch "$F" -o y --cfi=kcfi,bogus
usage patch-bad-seq "--seq: unknown sequence set 'v5' \(v4, v6.18\)" patch "$F" -o y --seq=v5
usage patch-bad-key "--key 'zz': want 32 hex digits \(128 bits\)" patch "$F" -o y --key zz
usage patch-seed-gone "--seed: the rehash key has 128 bits now; pass --key with 32 hex digits" patch "$F" -o y --seed 1
usage run-unknown-option "unknown option '--bogus'" run --bogus true
usage run-missing-arg "option '--cfi' needs an argument" run --cfi
usage run-no-prog "no PROG to run" run --cfi=kcfi
usage run-bad-cfi "--cfi: unknown word 'bogus' \(valid: auto, .*\)" run --cfi=bogus -- true
usage inspect-unknown-option "unknown option '--bogus'" inspect --bogus x
usage inspect-no-file "no FILE" inspect
usage inspect-two-files "one FILE at a time" inspect a b
usage inspect-diff-one "--diff needs two files, A and B" inspect --diff a
usage inspect-pid-missing "option '--pid' needs an argument" inspect --pid
usage inspect-pid-bad "--pid needs a process id, got 'x'" inspect --pid x
usage inspect-pid-file "--pid takes no FILE" inspect --pid 1 x
usage inspect-diff-pid "--diff and --pid do not go together" inspect --diff --pid 1 a b
usage seq-unknown-option "unknown option '--bogus'" seq --bogus
usage seq-missing-arg "option '--hash' needs an argument" seq --hash
usage seq-bad-hash "--hash needs a hex number, got 'zz'" seq --hash zz
usage seq-bad-arity "--arity needs a number 0..7, got '9'" seq --arity 9
usage seq-bad-set "--seq needs v4 or v6.18, got 'v9'" seq --seq v9
usage seq-operand "unexpected argument 'x'" seq x
usage demo-operand "takes no arguments" demo x
usage version-operand "takes no arguments" version x
usage help-two "one COMMAND at a time" help a b
# cached parses before it checks for root: the same lines as any user.
usage cached-unknown-option "unknown option '--bogus'" cached --bogus
usage cached-missing-arg "option '--dir' needs an argument" cached --dir
usage cached-bad-size "--max-size needs a size \\(a number, optionally K, M or G\\), got '12Q'" cached --max-size 12Q
usage cached-relative-dir "--dir needs an absolute path shorter than 200 bytes, got 'rel'" cached --dir rel
usage cached-operand "unexpected argument 'x'" cached x

# No command, an unknown one: the general usage error.
for a in "" frob; do
	"$FI" $a >"$OUT/out" 2>"$OUT/err"
	rc=$?
	if [ $rc = 2 ] && [ ! -s "$OUT/out" ] &&
	   grep -Eq "^fineibt: error: (no command|unknown command 'frob'); try 'fineibt help'$" "$OUT/err"; then
		pass "no-or-unknown-command[${a:-none}]"
	else
		fail "no-or-unknown-command[${a:-none}]" "rc=$rc $(cat "$OUT/err")"
	fi
done

# A failure (not a usage error): exit 1, one line naming the file.
"$FI" inspect "$F" >"$OUT/out" 2>"$OUT/err"
rc=$?
if [ $rc = 1 ] && [ "$(cat "$OUT/err")" = "fineibt: error: $F: No such file or directory" ]; then
	pass failure-exit-1
else
	fail failure-exit-1 "rc=$rc $(cat "$OUT/err")"
fi
# run: the program's status; 127 when it is not found (as env(1)).
"$FI" run -- "$F" 2>"$OUT/err"
rc=$?
if [ $rc = 127 ] && grep -q "^fineibt: error: run: $F: not found" "$OUT/err"; then
	pass run-not-found-127
else
	fail run-not-found-127 "rc=$rc $(cat "$OUT/err")"
fi
# 126 when it is there but cannot be executed, as env(1) (it said 127,
# "not found or not executable"), also found through PATH.
printf 'data\n' >"$OUT/noexec"
chmod 644 "$OUT/noexec"
for p in "$OUT/noexec" noexec; do
	PATH=$OUT:$PATH "$FI" run -- "$p" 2>"$OUT/err"
	rc=$?
	if [ $rc = 126 ] && [ "$(cat "$OUT/err")" = "fineibt: error: run: $p: cannot execute: Permission denied" ]; then
		pass "run-not-executable-126[$p]"
	else
		fail "run-not-executable-126[$p]" "rc=$rc $(cat "$OUT/err")"
	fi
done
# Found but the exec fails: a directory (126), a script whose interpreter
# is not there (127, as env(1); it said 126); one line in the format above,
# naming PROG as given.
mkdir -p "$OUT/adir"
printf '#!%s/no-such-interpreter\n' "$OUT" >"$OUT/badinterp"
chmod 755 "$OUT/badinterp"
for c in "$OUT/adir:126:Permission denied" "$OUT/badinterp:127:No such file or directory"; do
	p=${c%%:*}; w=${c#*:}; want=${w%%:*}; why=${w#*:}
	"$FI" run -- "$p" 2>"$OUT/err"
	rc=$?
	if [ $rc = "$want" ] && [ "$(cat "$OUT/err")" = "fineibt: error: run: $p: cannot execute: $why" ]; then
		pass "run-exec-fails-$want[${p##*/}]"
	else
		fail "run-exec-fails-$want[${p##*/}]" "rc=$rc $(cat "$OUT/err")"
	fi
done
# A script without a #! line is a shell script to execvp(3) and env(1),
# which run it with /bin/sh; run said "cannot execute: Exec format
# error", 126. (Not under SAN=1: the runtime is preloaded into sh.)
printf 'echo "ran $0 $1"\nexit 5\n' >"$OUT/nohashbang"
chmod 755 "$OUT/nohashbang"
if [ -z "${FINEIBT_SAN:-}" ]; then
	"$FI" run -q -- "$OUT/nohashbang" x >"$OUT/out" 2>"$OUT/err"
	rc=$?
	want=$(env "$OUT/nohashbang" x 2>&1)
	if [ $rc = 5 ] && [ "$(cat "$OUT/out")" = "$want" ] && [ ! -s "$OUT/err" ]; then
		pass run-script-without-hashbang-sh
	else
		fail run-script-without-hashbang-sh "rc=$rc out=$(cat "$OUT/out") err=$(cat "$OUT/err")"
	fi
fi
# (Not under SAN=1: the sanitized runtime cannot be preloaded into sh.)
if [ -z "${FINEIBT_SAN:-}" ]; then
	"$FI" run --cfi=kcfi -- sh -c 'exit 7' 2>"$OUT/err"
	rc=$?
	[ $rc = 7 ] && pass run-program-status || fail run-program-status "rc=$rc"
	# A program with no kCFI at all ran silently, as if checked: one
	# warning line now (none with -q), and still the program's status. A
	# stock kCFI program with a checked call gets no such line.
	printf 'int main(void) { return 7; }\n' >"$OUT/plain.c"
	printf 'int f(int x) { return x; }\nint (*volatile p)(int) = f;\nint main(void) { return p(7); }\n' >"$OUT/stock.c"
	if clang-22 -O1 -o "$OUT/plain" "$OUT/plain.c" &&
	   clang-22 -O1 -fsanitize=kcfi -o "$OUT/stock" "$OUT/stock.c"; then
		want="fineibt: warning: run: $OUT/plain: no kCFI checks in it (built without fineibt-cc or -fsanitize=kcfi, or no indirect call): its calls are not checked"
		"$FI" run -- "$OUT/plain" >"$OUT/out" 2>"$OUT/err"; rc=$?
		if [ $rc = 7 ] && [ "$(cat "$OUT/err")" = "$want" ] && [ ! -s "$OUT/out" ]; then
			pass run-no-kcfi-warns
		else
			fail run-no-kcfi-warns "rc=$rc err=$(cat "$OUT/err")"
		fi
		for q in -q --quiet; do
			"$FI" run "$q" -- "$OUT/plain" 2>"$OUT/err"; rc=$?
			if [ $rc = 7 ] && [ ! -s "$OUT/err" ]; then pass "run-no-kcfi-quiet[$q]"
			else fail "run-no-kcfi-quiet[$q]" "rc=$rc err=$(cat "$OUT/err")"; fi
		done
		"$FI" run -- "$OUT/stock" 2>"$OUT/err"; rc=$?
		if [ $rc = 7 ] && ! grep -q 'no kCFI checks' "$OUT/err"; then pass run-stock-kcfi-no-warning
		else fail run-stock-kcfi-no-warning "rc=$rc err=$(cat "$OUT/err")"; fi
	else
		fail run-no-kcfi-warns "cannot build with clang-22"
	fi
fi

# --help and `help CMD`: the same text, on stdout, exit 0.
for c in patch inspect seq run demo version help cached; do
	a=$("$FI" "$c" --help 2>&1); ra=$?
	b=$("$FI" help "$c" 2>&1); rb=$?
	if [ $ra = 0 ] && [ $rb = 0 ] && [ "$a" = "$b" ] && grep -q "fineibt $c" <<<"$a"; then
		pass "help-$c"
	else
		fail "help-$c" "rc=$ra/$rb"
	fi
done
exit 0
