#!/usr/bin/env bash
# jit_disasm: an independent reading of what the JIT emitter wrote into a
# live process. examples/jit/calc (built by jit_example.sh's make rule)
# dumps its finished code region (CALC_DUMP); LLVM's disassembler
# (llvm-mc-22 + llvm-objdump-22, not our decoder) reads it at its run-time
# address, and each generated function's preamble and each checked call
# site must be the instruction sequence docs/sequences.md gives for the mode, with
# the run-time hash the process uses for the type (printed by calc from a
# compiled C function of that type).
set -u
cd "${FINEIBT_ROOT:-.}"
ROOT=$PWD
. "$ROOT/tests/e2e/progs/sets.bash"	# fi_with_sets: both sequence sets
BUILD=${BUILD:-build}
case $BUILD in /*) ABS_BUILD=$BUILD ;; *) ABS_BUILD=$ROOT/$BUILD ;; esac
OUT=$ABS_BUILD/e2e/jit_disasm
CALC=$OUT/calc
MC=llvm-mc-22
OBJDUMP=llvm-objdump-22

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

mkdir -p "$OUT" || exit 1
if ! make -s -C examples/jit BUILD="$ABS_BUILD" ROOT="$ROOT" OUT="$OUT" \
	>"$OUT/build.log" 2>&1; then
	fail jit_disasm_build "$(tail -n 5 "$OUT/build.log")"
	exit 1
fi

declare -A INSN		# hex address (no 0x) -> "mnemonic operands"
declare -A NXT		# hex address -> the next instruction's address
NEXT=()			# listing order: addresses

# disasm BIN BASE: fill INSN/NEXT with LLVM's reading of BIN placed at BASE.
disasm() {
	local s=$OUT/code.s o=$OUT/code.o a t
	printf '\t.text\n\t.byte %s\n' "$(od -An -v -tx1 "$1" |
		tr -s ' \n' ' ' | sed 's/^ //; s/ $//; s/ /,0x/g; s/^/0x/')" >"$s"
	"$MC" -triple=x86_64 -filetype=obj "$s" -o "$o" || return 1
	INSN=() NXT=() NEXT=()
	while IFS='|' read -r a t; do
		INSN[$a]=$t
		[ ${#NEXT[@]} -gt 0 ] && NXT[${NEXT[-1]}]=$a
		NEXT+=("$a")
	done < <("$OBJDUMP" -d --no-show-raw-insn --adjust-vma="$2" "$o" |
		awk -F'\t' '/^ *[0-9a-f]+:/ {
			split($1, x, ":"); gsub(/ /, "", x[1]);
			op = $3; sub(/ *#.*/, "", op); sub(/ <.*>/, "", op);
			printf "%s|%s%s%s\n", x[1], $2, op == "" ? "" : " ", op }')
}

at() { echo "${INSN[$(printf '%x' $(($1)))]:-}"; }
hex() { printf '0x%x' $(($1)); }

# seq_at ADDR TEXT...: the instructions from ADDR on read TEXT..., in order.
seq_at() {
	local a want got
	printf -v a '%x' $(($1))
	shift
	for want in "$@"; do
		got=${INSN[$a]:-}
		if [ "$got" != "$want" ]; then
			echo "at 0x$a: '$got', want '$want'"
			return 1
		fi
		a=${NXT[$a]:-0}
	done
}

# The v6.18 set (docs/sequences.md), as llvm-objdump prints it: the
# preamble's cs cs cs jne,pn to func+3 and the 0f 1f 40 d6 poison; BHI
# calls a stub for arity 1 too; CS-padded calls (the prefixes fold into
# the call), no trailing NOPs; kCFI's jne .+3; test $0xd6,%al.
check_preamble_v618() {	# MODE FN HASH
	local m=$1 fn=$(($2)) h=$3 tgt
	case $m in
	kcfi | off)
		check_preamble "$m" "$2" "$h" "$4" ;;
	*bhi*)
		seq_at $((fn - 16)) endbr64 "subl \$$h, %r10d" || return 1
		tgt=$(at $((fn - 5)))
		[[ $tgt == "callq 0x"* ]] && [ $((${tgt#callq } % 32)) = 0 ] ||
			{ echo "at $(hex $((fn - 5))): '$tgt', want a call to a stub slot"; return 1; }
		seq_at "$fn" "nopl -0x2a(%rax)" ;;
	*)
		seq_at $((fn - 16)) endbr64 "subl \$$h, %r10d" \
			"jne $(hex $((fn + 3)))" "nopl -0x2a(%rax)" ;;
	esac
}

check_call_v618() {	# MODE SITE HASH TAIL
	local m=$1 s=$(($2)) h=$3 c=$4
	case $m in
	kcfi)
		seq_at "$s" "movl \$$(hex $(((-h) & 0xffffffff))), %r10d" \
			"addl -0xf(%r11), %r10d" "jne $(hex $((s + 13)))" \
			"testb \$-0x2a, %al" "$c *%r11" ;;
	off)	seq_at "$s" "jmp $(hex $((s + 14)))" ;;
	*paranoid*)
		seq_at "$s" "movl \$$h, %r10d" "cmpl -0x9(%r11), %r10d" \
			"leaq -0x10(%r11), %r11" "jne $(hex $((s + 13)))" "$c *%r11" ;;
	*)
		seq_at "$s" "movl \$$h, %r10d" "leaq -0x10(%r11), %r11" \
			"nopl (%rax)" "$c *%r11" ;;
	esac
}

check_preamble() {	# MODE FN HASH NARGS
	local m=$1 fn=$(($2)) h=$3 k=$4 reg tgt
	case $m in
	kcfi | off)
		reg=$([ "$k" = 1 ] && echo ecx || echo edx)
		seq_at $((fn - 16)) "movl \$$h, %$reg" nop nop nop nop nop nop nop \
			nop nop nop nop endbr64 ;;
	*bhi*)
		if [ "$k" = 1 ] && [[ $m != *warn* ]]; then
			seq_at $((fn - 16)) endbr64 "subl \$$h, %r10d" \
				"cmovneq %r10, %rdi" "jne $(hex $((fn - 10)))" "nopl (%rax)"
			return
		fi
		seq_at $((fn - 16)) endbr64 "subl \$$h, %r10d" || return 1
		tgt=$(at $((fn - 5)))
		# call __bhi_args[k]: a 32-byte slot of the stub array
		[[ $tgt == "callq 0x"* ]] && [ $((${tgt#callq } % 32)) = 0 ] ||
			{ echo "at $(hex $((fn - 5))): '$tgt', want a call to a stub slot"; return 1; }
		seq_at "$fn" "nopw (%rax)" ;;
	*)
		seq_at $((fn - 16)) endbr64 "subl \$$h, %r10d" \
			"jne $(hex $((fn - 10)))" "nopl (%rax)" "nopw (%rax)" ;;
	esac
}

check_call() {	# MODE SITE(after the mov) HASH TAIL(callq|jmpq)
	local m=$1 s=$(($2)) h=$3 c=$4
	case $m in
	kcfi)
		seq_at "$s" "movl \$$(hex $(((-h) & 0xffffffff))), %r10d" \
			"addl -0xf(%r11), %r10d" "je $(hex $((s + 14)))" ud2 \
			"$c *%r11" ;;
	off)	seq_at "$s" "jmp $(hex $((s + 14)))" ;;
	*paranoid*)
		seq_at "$s" "movl \$$h, %r10d" "cmpl -0x9(%r11), %r10d" \
			"leaq -0x10(%r11), %r11" "jne $(hex $((s + 13)))" "$c *%r11" nop ;;
	*)
		seq_at "$s" "movl \$$h, %r10d" "leaq -0x10(%r11), %r11" \
			"nopl (%rax)" "$c *%r11" "nopl (%rax)" ;;
	esac
}

for cfi in $(fi_with_sets kcfi off fineibt fineibt,paranoid fineibt,bhi \
	 fineibt,bhi,warn fineibt,paranoid,bhi); do
	m=$(fi_no_set "$cfi") v=
	[ "$(fi_set_of "$cfi")" = v6.18 ] && v=_v618
	t=jit_disasm_${m//,/_}$v
	if ! FINEIBT_CFI=$cfi CALC_DUMP=$OUT/code.bin "$CALC" run >"$OUT/$t.out" 2>&1; then
		fail "$t" "calc run failed: $(tail -n 2 "$OUT/$t.out")"
		continue
	fi
	base=$(sed -n 's/^jit: region \(0x[0-9a-f]*\)-.*/\1/p' "$OUT/$t.out")
	read -r h1 h2 < <(sed -n 's/^types: long(long) \(0x[0-9a-f]*\) .*long,long) \(0x[0-9a-f]*\) .*/\1 \2/p' \
		"$OUT/$t.out")
	h1=$(hex "$h1") h2=$(hex "$h2")
	if ! disasm "$OUT/code.bin" "$base"; then
		fail "$t" "llvm-mc could not assemble the dump"
		continue
	fi
	ok=1 why=
	# Preambles: x*x+3 is long(long), the others long(long, long).
	k=1
	for fn in $(awk '/^jit: .* at 0x/ { for (i = 1; i < NF; i++) if ($i == "at") print $(i + 1) }' \
		    "$OUT/$t.out"); do
		h=$([ "$k" = 1 ] && echo "$h1" || echo "$h2")
		r=$(check_preamble$v "$m" "$fn" "$h" "$k") || { ok=0 why+="preamble $fn: $r; "; }
		k=2
	done
	# Call sites: the mov of the target into r11, then the checked call.
	nsites=0 ntail=0
	for a in "${NEXT[@]}"; do
		[ "${INSN[$a]}" = "movq %rdx, %r11" ] || continue
		s=$((0x$a + 3))
		c=callq
		case $m in
		off) ;;
		*paranoid*) [ "$(at $((s + 16)))" = "jmpq *%r11" ] && c=jmpq ;;
		*) [ "$(at $((s + 14)))" = "jmpq *%r11" ] && c=jmpq ;;
		esac
		[ "$c" = jmpq ] && ntail=$((ntail + 1))
		nsites=$((nsites + 1))
		r=$(check_call$v "$m" "$s" "$h1" "$c") || { ok=0 why+="call $(hex "$s"): $r; "; }
	done
	# 4 calls back into C, one of them a tail call (f(x * y - 2)).
	[ "$nsites" = 4 ] || { ok=0 why+="$nsites call sites, want 4; "; }
	[ "$m" = off ] || [ "$ntail" = 1 ] || { ok=0 why+="$ntail tail calls, want 1; "; }
	if [ "$ok" = 1 ]; then pass "$t"; else fail "$t" "$why"; fi
done
