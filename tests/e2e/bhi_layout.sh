#!/usr/bin/env bash
# The __bhi_args[] layout (src/seq/bhi.S), checked on the assembled object with
# an independent disassembler (llvm-objdump-22): slot n starts at 32 * n
# with a 2-byte jne to a ud2 site, then the cmovne's of its n argument
# registers (rdi rsi rdx rcx r8 r9, rsp for 7), ret, int3; the two
# "ud2; ret" sites sit in the holes after slots 1 and 5 and are the only
# jne targets (slots 0-3 -> the first, 4-7 -> the second); the object has
# no relocations against it (a byte copy works anywhere). Also checks the
# 16 indirect thunks (src/seq/thunks.S) and what libfineibt.so exports.
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
obj=$BUILD/obj/seq/bhi.S.o
thunks=$BUILD/obj/seq/thunks.S.o
so=$BUILD/libfineibt.so
OBJDUMP=llvm-objdump-22
READELF=llvm-readelf-22

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
check() { if eval "$2"; then pass "$1"; else fail "$1" "$2"; fi; }

[ -f "$obj" ] || { fail bhi_layout_object "$obj missing (run make)"; exit 1; }

# "addr bytes|mnemonic|operands", one instruction per line, addresses in hex.
dis=$($OBJDUMP -d "$obj" 2>/dev/null |
	awk -F'\t' '/^ *[0-9a-f]+:/ {
		split($1, a, ":"); gsub(/ /, "", a[1]);
		b = a[2]; gsub(/^ +| +$/, "", b);
		printf "%s|%s|%s|%s\n", a[1], b, $2, $3 }')

insn_at() { echo "$dis" | awk -F'|' -v a="$1" '$1 == a'; }

regs=(%rdi %rsi %rdx %rcx %r8 %r9 %rsp)
ud_lo="" ud_hi=""
# The ud2 sites: exactly two, each followed by a ret.
uds=$(echo "$dis" | awk -F'|' '$3 == "ud2" { print $1 }')
check bhi_layout_two_ud2 '[ "$(echo "$uds" | wc -l)" = 2 ]'
ud_lo=$(echo "$uds" | sed -n 1p) ud_hi=$(echo "$uds" | sed -n 2p)
check bhi_layout_ud2_in_hole_after_slot1 \
	'[ $((16#$ud_lo)) -gt 32 ] && [ $((16#$ud_lo)) -lt 64 ]'
check bhi_layout_ud2_in_hole_after_slot5 \
	'[ $((16#$ud_hi)) -gt 160 ] && [ $((16#$ud_hi)) -lt 192 ]'
for u in $ud_lo $ud_hi; do
	next=$(printf '%x' $((16#$u + 2)))
	check "bhi_layout_ret_after_ud2_$u" '[[ "$(insn_at $next | cut -d"|" -f3)" =~ ^retq?$ ]]'
done

for n in 0 1 2 3 4 5 6 7; do
	a=$((32 * n))
	line=$(insn_at "$(printf '%x' $a)")
	IFS='|' read -r _ bytes mnem ops <<<"$line"
	want_ud=$ud_lo; [ $n -ge 4 ] && want_ud=$ud_hi
	tgt=${ops%% *}; tgt=${tgt#0x}
	ok=1
	[ "$mnem" = jne ] || ok=0
	[ "$(echo $bytes | wc -w)" = 2 ] || ok=0		# Jcc.d8
	[ "$tgt" = "$want_ud" ] || ok=0
	a=$((a + 2))
	for ((r = 0; r < n; r++)); do
		IFS='|' read -r _ _ mnem ops <<<"$(insn_at "$(printf '%x' $a)")"
		[ "$mnem" = cmovneq ] && [ "$ops" = "%r10, ${regs[r]}" ] || ok=0
		a=$((a + 4))
	done
	IFS='|' read -r _ _ mnem _ <<<"$(insn_at "$(printf '%x' $a)")"
	[ "$mnem" = retq ] || [ "$mnem" = ret ] || ok=0
	IFS='|' read -r _ _ mnem _ <<<"$(insn_at "$(printf '%x' $((a + 1)))")"
	[ "$mnem" = int3 ] || ok=0
	check "bhi_layout_slot$n" '[ $ok = 1 ]'
	[ $ok = 1 ] || insn_at "$(printf '%x' $((32 * n)))"
done

syms=$($READELF -sW "$obj")
sym_val() { echo "$syms" | awk -v s="$1" '$8 == s { print $2 }'; }
check bhi_layout_symbols \
	'[ "$((16#$(sym_val __bhi_args)))" = 0 ] && [ "$((16#$(sym_val __bhi_args_end)))" = 256 ]'
check bhi_layout_no_relocations '! $READELF -rW "$obj" | grep -q "section .\.rela\.text\.fineibt_bhi"'

# Thunks: all 16, each "jmp *%reg".
if [ -f "$thunks" ]; then
	ok=1
	for r in rax rcx rdx rbx rsp rbp rsi rdi r8 r9 r10 r11 r12 r13 r14 r15; do
		$OBJDUMP -d "$thunks" | grep -A1 "<__x86_indirect_thunk_$r>:" |
			grep -qE "jmpq?[[:space:]]+\*%$r\$" || { ok=0; echo "  thunk $r"; }
	done
	check thunks_all_16 '[ $ok = 1 ]'
fi

# libfineibt.so exports the stubs, the thunks and the SIGILL interposers.
if [ -f "$so" ]; then
	dyn=$($READELF --dyn-syms -W "$so")
	check so_exports_bhi_args 'echo "$dyn" | grep -q " __bhi_args@@FINEIBT_0$" &&
		echo "$dyn" | grep -q " __bhi_args_end@@FINEIBT_0$"'
	check so_exports_thunks \
		'[ "$(echo "$dyn" | grep -c " __x86_indirect_thunk_[a-z0-9]*@@FINEIBT_0$")" = 16 ]'
	check so_exports_sigaction_glibc_version \
		'echo "$dyn" | grep -q " sigaction@@GLIBC_2.2.5$" &&
		 echo "$dyn" | grep -q " signal@@GLIBC_2.2.5$"'
	check so_hides_internals '! echo "$dyn" | grep -qE " fi_(trap|rt)_"'
fi
