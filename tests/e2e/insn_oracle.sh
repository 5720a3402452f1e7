#!/usr/bin/env bash
# insn_oracle: an independent check of every byte sequence fineibt writes.
#
# `fineibt seq` prints what the templates and encoders of src/seq/insn.c emit;
# each sequence is assembled from .byte directives into an object with
# llvm-mc-22 and disassembled by llvm-objdump-22 (LLVM's decoder, not ours),
# and the instruction text is compared with tests/golden/insn/<name>.txt.
# The overlapping decodes the sequences rely on (the jne target inside the
# FineIBT preamble, the LOCK Jcc of the paranoid caller, func+0 under the
# arity-1 inline form) are decoded from their own start address too.
# On top of the golden text a few facts are asserted directly, so that a
# careless regeneration cannot bless a wrong branch target.
#
# Regenerate the golden files on purpose (then review `git diff tests/golden`):
#   FINEIBT_REGEN=1 make check T=insn_oracle
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
GOLD=$ROOT/tests/golden/insn
OUT=$BUILD/e2e/insn_oracle
FI=$BUILD/fineibt
MC=llvm-mc-22
OBJDUMP=llvm-objdump-22
# Hash bytes 5a 5a fe ca: distinct from the templates' 0x12345678.
HASH=cafe5a5a
IP=0x401000
THUNK=0x402000
STUBS=0x403000
REGEN=${FINEIBT_REGEN:-}

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

for t in "$MC" "$OBJDUMP"; do
	if ! command -v "$t" >/dev/null; then
		fail "oracle tools" "$t not in PATH (run scripts/deps.sh)"
		exit 1
	fi
done
mkdir -p "$OUT" || exit 1
rm -f "$OUT"/*.txt

"$FI" seq --hash "$HASH" --ip "$IP" --thunk "$THUNK" --stubs "$STUBS" >"$OUT/seq.lst"
rc=$?
if [ "$rc" != 0 ]; then
	fail "fineibt seq" "exited with status $rc"
	exit 1
fi

# disasm NAME START_OFFSET BYTES...: LLVM's reading of BYTES placed at $IP,
# from $IP+START_OFFSET on, one "addr: bytes | text" line per instruction.
# Symbolic <.text+x> and "# imm =" comments are dropped; a lone prefix byte
# (objdump prints "lock" on its own line) is joined to its instruction.
disasm() {
	local name=$1 start=$2; shift 2
	local s="$OUT/$name.s" o="$OUT/$name.o"
	printf '\t.text\n\t.byte %s\n' "$(printf '0x%s,' "$@" | sed 's/,$//')" >"$s"
	"$MC" -triple=x86_64 -filetype=obj "$s" -o "$o" || return 1
	"$OBJDUMP" -d --adjust-vma="$IP" --start-address="$start" "$o" |
	awk '
	/^ *[0-9a-f]+:/ {
		line = $0
		sub(/ *<\.text[^>]*>/, "", line)
		sub(/ *# imm = .*/, "", line)
		n = split(line, f, "\t")
		head = f[1]; text = ""
		for (i = 2; i <= n; i++)
			text = text (text == "" ? "" : " ") f[i]
		gsub(/  +/, " ", head); sub(/ +$/, "", head); sub(/^ +/, "", head)
		gsub(/ +/, " ", text); sub(/ +$/, "", text)
		split(head, h, ": ")
		if (pend != "") {
			print paddr ": " pbytes " " h[2] " | " pend " " text
			pend = ""
			next
		}
		if (text == "lock") {
			paddr = h[1]; pbytes = h[2]; pend = text
			next
		}
		print h[1] ": " h[2] " | " text
	}'
}

# golden NAME: compare (or with FINEIBT_REGEN=1, write) one golden file.
golden() {
	local name=$1 got="$OUT/$1.txt" want="$GOLD/$1.txt"
	if [ -n "$REGEN" ]; then
		mkdir -p "$GOLD" && cp "$got" "$want"
		pass "golden $name (regenerated)"
	elif [ ! -f "$want" ]; then
		fail "golden $name" "no $want (FINEIBT_REGEN=1 make check T=insn_oracle)"
	elif diff -u "$want" "$got" >"$OUT/$name.diff"; then
		pass "golden $name"
	else
		fail "golden $name" "disassembly differs: $(sed -n '3,$p' "$OUT/$name.diff" | tr '\n' ' ' | cut -c1-300)"
	fi
}

# check NAME FILE LINE_NO EXPECTED: line LINE_NO of FILE is exactly EXPECTED.
check_line() {
	local got
	got=$(sed -n "$3p" "$OUT/$2.txt")
	if [ "$got" = "$4" ]; then
		pass "$1"
	else
		fail "$1" "line $3 of $2 is '$got', want '$4'"
	fi
}

declare -A BYTES
while IFS= read -r line; do
	name=${line%%:*}
	bytes=${line#*: }
	BYTES[$name]=$bytes
	# shellcheck disable=SC2086
	if disasm "$name" 0 $bytes >"$OUT/$name.txt"; then
		golden "$name"
	else
		fail "golden $name" "llvm could not assemble/disassemble '$bytes'"
	fi
done < <(grep -v '^#' "$OUT/seq.lst")
# The first line names the set the encoders wrote.
if [ "$(head -n 1 "$OUT/seq.lst")" = "# sequence set: v4" ]; then
	pass "seq names its set (v4)"
else
	fail "seq names its set (v4)" "first line '$(head -n 1 "$OUT/seq.lst")'"
fi

# overlap NAME SEQ OFFSET: decode sequence SEQ from its byte OFFSET.
overlap() {
	local name=$1 seq=$2 off=$3
	if [ -z "${BYTES[$seq]:-}" ]; then
		fail "golden $name" "fineibt seq printed no '$seq'"
		return
	fi
	# shellcheck disable=SC2086
	disasm "$name" "$off" ${BYTES[$seq]} >"$OUT/$name.txt"
	golden "$name"
}
overlap overlap.fineibt_preamble+6 fineibt_preamble 6
overlap overlap.paranoid.call+d paranoid.call 0xd
overlap overlap.paranoid.jmp+d paranoid.jmp 0xd
overlap overlap.fineibt_bhi_preamble.a1+10 fineibt_bhi_preamble.a1 0x10

# Facts that do not depend on the golden files.
check_line "fineibt preamble: jne lands on byte 6" fineibt_preamble 3 \
	"40100b: 75 f9 | jne 0x401006"
check_line "fineibt preamble+6: 0xea is invalid" overlap.fineibt_preamble+6 1 \
	"401006: ea | <unknown>"
check_line "paranoid: jne lands on byte 0xd" paranoid.call 4 \
	"40100e: 75 fd | jne 0x40100d"
check_line "paranoid+0xd: lock jne (to itself)" overlap.paranoid.call+d 1 \
	"40100d: f0 75 fd | lock jne 0x40100d"
check_line "arity-1 inline func+0: cmc" overlap.fineibt_bhi_preamble.a1+10 1 \
	"401010: f5 | cmc"
check_line "arity-1 inline func+1: nopl (%rax)" overlap.fineibt_bhi_preamble.a1+10 2 \
	"401011: 0f 1f 00 | nopl (%rax)"
check_line "kcfi caller calls the thunk" kcfi_caller.call 5 \
	"40100e: 2e e8 ec 0f 00 00 | callq 0x402000"
for a in 2 3 4 5 6 7; do
	t=$(printf '0x%x' $((STUBS + a * 32)))
	got=$(grep -c "| callq $t\$" "$OUT/fineibt_bhi_preamble.a$a.txt")
	if [ "$got" = 1 ] && grep -q "^40100b: e8 " "$OUT/fineibt_bhi_preamble.a$a.txt"; then
		pass "bhi arity $a calls __bhi_args[$a] from byte 0xb"
	else
		fail "bhi arity $a calls __bhi_args[$a] from byte 0xb" "no 'callq $t' at 40100b"
	fi
done

# A golden file no sequence produced any more is stale.
for f in "$GOLD"/*.txt; do
	[ -f "$f" ] || continue
	n=${f##*/}
	if [ ! -f "$OUT/$n" ]; then
		fail "golden ${n%.txt}" "stale golden file: no sequence of that name"
	fi
done

# The v6.18 set (fineibt seq --seq v6.18): the encoders' output only (the
# templates are the same list as above), golden files in insn-v6.18/.
GOLD=$ROOT/tests/golden/insn-v6.18
OUT=$BUILD/e2e/insn_oracle/v6.18
mkdir -p "$OUT" || exit 1
rm -f "$OUT"/*.txt
if ! "$FI" seq --seq v6.18 --hash "$HASH" --ip "$IP" --thunk "$THUNK" \
	--stubs "$STUBS" >"$OUT/seq.lst"; then
	fail "fineibt seq --seq v6.18" "failed"
	exit 1
fi
unset BYTES
declare -A BYTES
while IFS= read -r line; do
	name=${line%%:*}
	bytes=${line#*: }
	BYTES[$name]=$bytes
	# shellcheck disable=SC2086
	if disasm "$name" 0 $bytes >"$OUT/$name.txt"; then
		golden "$name"
	else
		fail "golden v6.18 $name" "llvm could not assemble/disassemble '$bytes'"
	fi
done < <(sed -n '/^kcfi_preamble\.a0:/,$p' "$OUT/seq.lst")
if [ "$(head -n 1 "$OUT/seq.lst")" = "# sequence set: v6.18" ]; then
	pass "seq names its set (v6.18)"
else
	fail "seq names its set (v6.18)" "first line '$(head -n 1 "$OUT/seq.lst")'"
fi
overlap overlap.fineibt_preamble+13 fineibt_preamble 0x13
overlap overlap.kcfi_caller.call+d kcfi_caller.call 0xd
overlap overlap.paranoid.call+d paranoid.call 0xd
check_line "v6.18 preamble: jne,pn lands on func+3" fineibt_preamble 3 \
	"40100b: 2e 2e 2e 75 03 | jne 0x401013"
check_line "v6.18 preamble: func+0 is the poison nopl" fineibt_preamble 4 \
	"401010: 0f 1f 40 d6 | nopl -0x2a(%rax)"
check_line "v6.18 preamble+0x13: 0xd6 (UDB) is invalid" overlap.fineibt_preamble+13 1 \
	"401013: d6 | <unknown>"
check_line "v6.18 preamble: the hash is subtracted from r10d" fineibt_preamble 2 \
	"401004: 41 81 ea 5a 5a fe ca | subl \$0xcafe5a5a, %r10d"
check_line "v6.18 kcfi caller: jne lands on the test's d6" kcfi_caller.call 3 \
	"40100a: 75 01 | jne 0x40100d"
check_line "v6.18 kcfi caller: test \$0xd6, %al when taken through" kcfi_caller.call 4 \
	"40100c: a8 d6 | testb \$-0x2a, %al"
check_line "v6.18 kcfi caller+0xd: UDB" overlap.kcfi_caller.call+d 1 \
	"40100d: d6 | <unknown>"
check_line "v6.18 caller: CS-padded call *%r11" fineibt_caller.call 4 \
	"40100e: 2e 2e 2e 41 ff d3 | callq *%r11"
check_line "v6.18 paranoid: cs call *%r11 at 0x10" paranoid.call 5 \
	"401010: 2e 41 ff d3 | callq *%r11"
check_line "v6.18 paranoid+0xd: lock jne (to itself)" overlap.paranoid.call+d 1 \
	"40100d: f0 75 fd | lock jne 0x40100d"
for a in 1 2 7; do
	t=$(printf '0x%x' $((STUBS + a * 32)))
	if grep -q "^40100b: e8 .*| callq $t\$" "$OUT/fineibt_bhi_preamble.a$a.txt"; then
		pass "v6.18 bhi arity $a calls __bhi_args[$a] (no inline form)"
	else
		fail "v6.18 bhi arity $a calls __bhi_args[$a]" "$(cat "$OUT/fineibt_bhi_preamble.a$a.txt")"
	fi
done
# %eax carries a variadic call's vector count: only the compiler's own
# kCFI preamble (movl $hash, %eax, never executed) may name it.
eax=$(grep -l '%eax\|%al' "$OUT"/*.txt | grep -v '/kcfi_preamble\.a\|/kcfi_caller\.')
if [ -z "$eax" ] && grep -q '%r10d' "$OUT/fineibt_caller.call.txt"; then
	pass "v6.18 userspace form: no sequence writes %eax"
else
	fail "v6.18 userspace form" "%eax/%al in: $eax"
fi
for f in "$GOLD"/*.txt; do
	[ -f "$f" ] || continue
	n=${f##*/}
	[ -f "$OUT/$n" ] || fail "golden v6.18 ${n%.txt}" "stale golden file"
done
if "$FI" seq --seq v9 >/dev/null 2>"$OUT/bad.err"; then
	fail "seq --seq v9" "exited 0"
elif grep -q "^fineibt: error: seq: --seq needs v4 or v6.18, got 'v9'; try 'fineibt help seq'$" "$OUT/bad.err"; then
	pass "seq rejects --seq v9"
else
	fail "seq --seq v9" "$(cat "$OUT/bad.err")"
fi
GOLD=$ROOT/tests/golden/insn
OUT=$BUILD/e2e/insn_oracle

# The CLI itself: --asm, its missing-tool error, bad options.
if "$FI" seq --asm --arity 1 --hash "$HASH" >"$OUT/asm.out" 2>&1 &&
	grep -q '^fineibt_bhi_preamble.a1: ' "$OUT/asm.out" &&
	grep -q $'^\tcmovneq\t%r10, %rdi' "$OUT/asm.out" &&
	! grep -q '^kcfi_preamble.a2:' "$OUT/asm.out"; then
	pass "seq --asm --arity 1"
else
	fail "seq --asm --arity 1" "$(head -c 300 "$OUT/asm.out")"
fi
fi_abs=$(cd "$(dirname "$FI")" && pwd)/$(basename "$FI")
if (PATH=/nonexistent "$fi_abs" seq --asm >/dev/null 2>"$OUT/nomc.err"); then
	fail "seq --asm without llvm-mc-22" "exited 0"
elif grep -q "^fineibt: error: seq: --asm needs llvm-mc-22 in PATH" "$OUT/nomc.err"; then
	pass "seq --asm without llvm-mc-22"
else
	fail "seq --asm without llvm-mc-22" "$(cat "$OUT/nomc.err")"
fi
for bad in "--arity 8" "--hash xyz" "--hash 100000000" "--bogus"; do
	# shellcheck disable=SC2086
	"$FI" seq $bad >/dev/null 2>"$OUT/bad.err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q '^fineibt: error: ' "$OUT/bad.err"; then
		pass "seq rejects $bad"
	else
		fail "seq rejects $bad" "status $rc: $(cat "$OUT/bad.err")"
	fi
done
if "$FI" seq --help | grep -q '^Usage: fineibt seq'; then
	pass "seq --help"
else
	fail "seq --help" "no usage line"
fi
if "$FI" seq --ip 0 --thunk ffffffff00000000 >/dev/null 2>"$OUT/far.err"; then
	fail "seq: far thunk" "exited 0"
elif grep -q "^fineibt: error: kcfi_caller.call: --thunk or --stubs is out of rel32 reach" "$OUT/far.err"; then
	pass "seq: far thunk is an error"
else
	fail "seq: far thunk" "$(cat "$OUT/far.err")"
fi
