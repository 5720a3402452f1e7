#!/usr/bin/env bash
# fineibt patch, end to end, on the kCFI test programs (tests/progs).
#
# For each mode the patched file is disassembled by llvm-objdump-22 and
# every site is compared with the sequence docs/sequences.md gives for it,
# the sites being found independently of the tool: preambles from the
# __cfi_<name> symbols, call sites from .kcfi_traps (read with od), thunk
# calls from the input's disassembly. Hashes are recomputed here (the keyed
# Feistel network over SipHash, then the LFSR) for --key runs. A byte diff of input and output
# must touch only those sites, the e_shoff/e_shnum/e_shstrndx fields and the
# appended tail. The patched programs are run (no runtime is needed while
# every call is legal), llvm-readelf must list .fineibt and fineibt inspect
# must report the mode. Then the error cases: each exits 1 and leaves no
# output file behind.
set -u
cd "${FINEIBT_ROOT:-.}"
B=${BUILD:-build}
W=$B/e2e/patch
FI=$B/fineibt
P=$B/progs
KEY=9e3779b97f4a7c15f39cc0605cedc834
OBJDUMP=llvm-objdump-22
READELF=llvm-readelf-22
OBJCOPY=llvm-objcopy-22

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

rm -rf "$W"
mkdir -p "$W"
if ! bash tests/progs/build.sh "$P"; then
	fail progs_build "tests/progs/build.sh failed"
	exit 1
fi
# The test programs carry no BHI stubs: a variant linked with src/seq/bhi.S.
KCFI="-fsanitize=kcfi -fsanitize-kcfi-arity -fpatchable-function-entry=11,11
 -falign-functions=16 -fcf-protection=branch -mretpoline-external-thunk
 -mindirect-branch-cs-prefix"
# shellcheck disable=SC2086
if ! clang-22 -O2 -Wall -Werror -Itests/progs $KCFI -fPIE -pie \
	--ld-path="$(command -v ld.lld-22)" -o "$W/prog_bhi" tests/progs/prog.c \
	tests/progs/naked.S tests/progs/thunk.S src/seq/bhi.S; then
	fail prog_bhi_build "cannot link the test program with src/seq/bhi.S"
	exit 1
fi

# ------------------------------------------------------------ oracles

# "addr insn" for every instruction; .L labels dropped so that objdump
# decodes each function from its start, comments and <sym> suffixes cut.
disasm() {
	$OBJCOPY -X "$1" "$W/dis.tmp" || return 1
	$OBJDUMP -d --no-show-raw-insn "$W/dis.tmp" | awk '
	match($0, /^ *[0-9a-f]+:/) {
		a = substr($0, 1, RLENGTH - 1); gsub(/ /, "", a); sub(/^0+/, "", a)
		t = substr($0, RLENGTH + 1)
		sub(/#.*$/, "", t); gsub(/ <[^>]*>/, "", t); gsub(/[ \t]+/, " ", t)
		sub(/^ /, "", t); sub(/ $/, "", t)
		print (a == "" ? "0" : a), t
	}'
}

sym() { $READELF -sW "$1" | awk -v n="$2" '$8 == n { print $2; exit }'; }

is_endbr() {
	case $1 in
	4196274163 | 4213051379 | 2035558 | 2035701 | 3594526479) return 0 ;;
	esac
	return 1
}

# SipHash-2-4 (docs/sequences.md), on bash's 64-bit arithmetic: sums
# wrap, and >> is arithmetic, so a rotation masks the bits shifted in.
rotl() { RV=$((($1 << $2) | (($1 >> (64 - $2)) & ((1 << $2) - 1)))); }
sipround() {
	V0=$((V0 + V1)); rotl $V1 13; V1=$((RV ^ V0)); rotl $V0 32; V0=$RV
	V2=$((V2 + V3)); rotl $V3 16; V3=$((RV ^ V2))
	V0=$((V0 + V3)); rotl $V3 21; V3=$((RV ^ V0))
	V2=$((V2 + V1)); rotl $V1 17; V1=$((RV ^ V2)); rotl $V2 32; V2=$RV
}
# K0, K1: the key's two little-endian 64-bit words, from KEY (bytes in order).
K0=0 K1=0
for ((i = 7; i >= 0; i--)); do
	K0=$(((K0 << 8) | 16#${KEY:2*i:2})); K1=$(((K1 << 8) | 16#${KEY:16+2*i:2}))
done
# SF = the low 16 bits of SipHash-2-4 of the 4 bytes le16($2) le16($1).
sipf() {
	local m=$(((4 << 56) | ($1 << 16) | $2))
	V0=$((K0 ^ 0x736f6d6570736575)); V1=$((K1 ^ 0x646f72616e646f6d))
	V2=$((K0 ^ 0x6c7967656e657261)); V3=$((K1 ^ 0x7465646279746573))
	V3=$((V3 ^ m)); sipround; sipround; V0=$((V0 ^ m))
	V2=$((V2 ^ 0xff)); sipround; sipround; sipround; sipround
	SF=$(((V0 ^ V1 ^ V2 ^ V3) & 0xffff))
}

# NH = the hash after patching in the current case: the 10-round Feistel
# network on the 16-bit halves (round i: L, R -> R, L ^ F(i, R)), then
# LFSR-stepped off ENDBR lookalikes (and their negation). Memoised.
declare -A NHMEMO
newhash() {
	local l r t i
	NH=$(($1))
	[ "$RAND" = 1 ] || return 0
	if [ -n "${NHMEMO[$NH]:-}" ]; then
		NH=${NHMEMO[$NH]}
		return 0
	fi
	l=$((NH >> 16)) r=$((NH & 0xffff))
	for ((i = 0; i < 10; i++)); do
		sipf $i $r
		t=$((l ^ SF)) l=$r r=$t
	done
	t=$NH
	NH=$(((l << 16) | r))
	while is_endbr $NH || is_endbr $(((-NH) & 0xffffffff)); do
		if ((NH & 1)); then NH=$(((NH >> 1) ^ 0x80200003)); else NH=$((NH >> 1)); fi
	done
	NHMEMO[$t]=$NH
}

# Call site starts (decimal), from .kcfi_traps: s32 relative to itself.
call_sites() {
	local a o s
	read -r a o s < <($READELF -SW "$1" | awk '{ for (i = 1; i < NF; i++)
		if ($i == ".kcfi_traps") { print $(i + 2), $(i + 3), $(i + 4); exit } }')
	[ -n "${a:-}" ] || return 0
	od -An -v -td4 -j $((16#$o)) -N $((16#$s)) "$1" | tr -s ' ' '\n' |
		awk -v base=$((16#$a)) 'NF { print base + 4 * n++ + $1 - 12 }'
}

# Preamble starts (decimal) from the __cfi_ symbols.
preambles() {
	$READELF -sW "$1" | awk '$8 ~ /^__cfi_/ { print $2 }' | sort -u |
		while read -r v; do echo $((16#$v)); done
}

ARITY_OF=([0]=%eax %ecx %edx %ebx %esp %ebp %esi %edi)

# INSN[hexaddr] = instruction of the input (one map per input, cached).
declare -A INSN
load_input() {
	local in=$1 c=$W/cache/${1//\//_} a t
	if [ ! -f "$c.map" ]; then
		mkdir -p "$W/cache"
		disasm "$in" >"$c.map"
		preambles "$in" >"$c.pres"
		call_sites "$in" >"$c.calls"
		t=$(sym "$in" __x86_indirect_thunk_r11)
		# unchecked thunk calls: calls of the r11 thunk outside call sites
		awk -v t="0x$(printf %x $((16#${t:-0})))" \
			'NR == FNR { s[$1 + 14] = 1; next }
			 $2 ~ /^(callq|jmp)$/ && $3 == t {
				a = 0; h = $1
				for (i = 1; i <= length(h); i++)
					a = a * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
				if (!(a in s)) print a }' "$c.calls" "$c.map" >"$c.tcalls"
	fi
	cp "$c.pres" "$W/pres"
	cp "$c.calls" "$W/calls"
	cp "$c.tcalls" "$W/tcalls"
	INSN=()
	while read -r a t; do INSN[$a]=$t; done <"$c.map"
}

# emit ADDR TEXT: one expected "hexaddr insn" line
emit() { printf '%x %s\n' "$1" "$2"; }

# Expected lines for the preamble at decimal $1.
expect_preamble() {
	local pre=$1 f=$(($1 + 16)) key line reg ar=-1 entry i
	printf -v key %x $pre
	line=${INSN[$key]:-}
	if [[ ! $line =~ ^movl\ \$0x([0-9a-f]+),\ (%e..)$ ]]; then
		echo "BAD preamble at $key: $line"
		return
	fi
	reg=${BASH_REMATCH[2]}
	newhash $((16#${BASH_REMATCH[1]}))
	for i in 0 1 2 3 4 5 6 7; do [ "${ARITY_OF[i]}" = "$reg" ] && ar=$i; done
	printf -v key %x $f
	entry=${INSN[$key]:-}
	if [ "$MODE" != fineibt ] || [ "$entry" != endbr64 ]; then
		emit $pre "movl \$0x$(printf %x $NH), $reg"
		emit $f "$entry"
		return
	fi
	emit $pre endbr64
	emit $((pre + 4)) "subl \$0x$(printf %x $NH), %r10d"
	if [ "$V618" = 1 ]; then
		# docs/sequences.md: jne,pn to func+3 (the UDB of the poison),
		# or the stub call for every arity >= 1 (no inline form)
		if [ "$BHI" = 1 ] && [ $ar -ge 1 ]; then
			emit $((pre + 11)) "callq 0x$(printf %x $((BHI_ARGS + 32 * ar)))"
		else
			emit $((pre + 11)) "jne 0x$(printf %x $((f + 3)))"
		fi
		emit $f "nopl -0x2a(%rax)"
		return
	fi
	if [ "$BHI" = 1 ] && [ $ar = 1 ] && [ "$WARN" = 0 ]; then
		emit $((pre + 11)) "cmovneq %r10, %rdi"
		emit $((pre + 15)) "jne 0x$(printf %x $((pre + 6)))"
		emit $f cmc
		return
	fi
	if [ "$BHI" = 1 ] && [ $ar -ge 1 ]; then
		emit $((pre + 11)) "callq 0x$(printf %x $((BHI_ARGS + 32 * ar)))"
	else
		emit $((pre + 11)) "jne 0x$(printf %x $((pre + 6)))"
		emit $((pre + 13)) "nopl (%rax)"
	fi
	emit $f "nopw (%rax)"
}

# Expected lines for the call site at decimal $1.
expect_caller() {
	local s=$1 key line tail ind="callq *%r11"
	printf -v key %x $s
	line=${INSN[$key]:-}
	if [[ ! $line =~ ^movl\ \$0x([0-9a-f]+),\ %r10d$ ]]; then
		echo "BAD call site at $key: $line"
		return
	fi
	newhash $(((-16#${BASH_REMATCH[1]}) & 0xffffffff))
	printf -v key %x $((s + 14))
	tail=${INSN[$key]:-}
	case $tail in jmp*) ind="jmpq *%r11" ;; esac
	case $MODE in
	off)
		# the rest reads as data after the jmp.d8; the byte checks cover it
		emit $s "jmp 0x$(printf %x $((s + 14)))"
		return ;;
	kcfi)
		emit $s "movl \$0x$(printf %x $(((-NH) & 0xffffffff))), %r10d"
		emit $((s + 6)) "addl -0xf(%r11), %r10d"
		if [ "$V618" = 1 ]; then
			emit $((s + 10)) "jne 0x$(printf %x $((s + 13)))"
			emit $((s + 12)) "testb \$-0x2a, %al"
		else
			emit $((s + 10)) "je 0x$(printf %x $((s + 14)))"
			emit $((s + 12)) ud2
		fi ;;
	fineibt)
		emit $s "movl \$0x$(printf %x $NH), %r10d"
		if [ "$PARANOID" = 1 ]; then
			emit $((s + 6)) "cmpl -0x9(%r11), %r10d"
			emit $((s + 10)) "leaq -0x10(%r11), %r11"
			emit $((s + 14)) "jne 0x$(printf %x $((s + 13)))"
			emit $((s + 16)) "$ind"
			[ "$V618" = 1 ] || emit $((s + 19)) nop
			return
		fi
		emit $((s + 6)) "leaq -0x10(%r11), %r11"
		emit $((s + 10)) "nopl (%rax)" ;;
	esac
	if [ "$DETHUNK" = 1 ]; then
		emit $((s + 14)) "$ind"
		# kcfi and off callers end with the CS-padded call in both
		# sets; v4's FineIBT caller keeps its trailing nop3
		[ "$V618" = 1 ] || [ "$MODE" != fineibt ] ||
			emit $((s + 17)) "nopl (%rax)"
	else
		emit $((s + 14)) "$tail"
	fi
}

expect_tcall() {
	local a=$1 key line
	printf -v key %x $a
	line=${INSN[$key]:-}
	# Only off makes them direct: every other mode leaves them to the
	# thunks' coarse check (the test programs link crt's thunks).
	if [ "$DETHUNK" = 0 ] || [ "$MODE" != off ]; then
		emit $a "$line"
		return
	fi
	case $line in
	jmp*) emit $a "jmpq *%r11" ;;
	*) emit $a "callq *%r11" ;;
	esac
	# v6.18 pads with CS prefixes in front: one instruction
	[ "$V618" = 1 ] || emit $((a + 3)) "nopl (%rax)"
}

# file offset ranges "start end" of every site (and the ELF header fields)
site_ranges() {
	local in=$1
	{
		echo "$((0x28)) $((0x30))"	# e_shoff
		echo "$((0x3c)) $((0x40))"	# e_shnum, e_shstrndx
		awk '{ print $1, $1 + 20 }' "$W/pres"
		awk '{ print $1, $1 + 20 }' "$W/calls"
		awk '{ print $1, $1 + 6 }' "$W/tcalls"
	} | awk -v segs="$($READELF -lW "$in" | awk '$1 == "LOAD" { printf "%d:%d:%d ", $2, $3, $5 }')" '
	BEGIN { n = split(segs, s, " ") }
	NR <= 2 { print; next }
	{
		for (i = 1; i <= n; i++) {
			split(s[i], f, ":")
			if ($1 >= f[2] && $1 < f[2] + f[3]) {
				print $1 - f[2] + f[1], $2 - f[2] + f[1]; next
			}
		}
	}'
}

# cmp -l offsets (1-based) must all fall inside the ranges
diff_in_sites() {
	local in=$1 out=$2
	site_ranges "$in" >"$W/ranges"
	cmp -l "$in" "$out" 2>/dev/null | awk 'NR == FNR { lo[NR] = $1; hi[NR] = $2; n = NR; next }
	{
		o = $1 - 1
		for (i = 1; i <= n; i++) if (o >= lo[i] && o < hi[i]) next
		printf "byte at file offset 0x%x changed outside every site\n", o; bad++
	}
	END { exit bad > 0 }' "$W/ranges" -
}

# ------------------------------------------------------------ one case

# run_case NAME INPUT CFI-LIST [extra patch args]: patch, then check.
run_case() {
	local name=$1 in=$2 cfi=$3 out p c t
	shift 3
	out=$W/$name/$(basename "$in")
	mkdir -p "$W/$name"
	MODE=${cfi%%,*}
	PARANOID=0 BHI=0 WARN=0 RAND=1 DETHUNK=1
	case ,$cfi, in *,paranoid,*) PARANOID=1 ;; esac
	case ,$cfi, in *,bhi,*) BHI=1 ;; esac
	case ,$cfi, in *,warn,*) WARN=1 ;; esac
	case ,$cfi, in *,norand,*) RAND=0 ;; esac
	[ "$MODE" = off ] && RAND=0
	case " $* " in *" --no-dethunk "*) DETHUNK=0 ;; esac
	V618=0
	case " $* " in *" --seq=v6.18 "*) V618=1 ;; esac
	BHI_ARGS=$(sym "$in" __bhi_args)
	BHI_ARGS=$((16#${BHI_ARGS:-0}))

	if ! $FI patch -q "$in" -o "$out" --cfi="$cfi" --key $KEY "$@"; then
		fail "${name}_patch" "fineibt patch exited $?"
		return 1
	fi
	pass "${name}_patch"
	load_input "$in"
	disasm "$out" >"$W/out.map"
	{
		while read -r p; do expect_preamble "$p"; done <"$W/pres"
		while read -r c; do expect_caller "$c"; done <"$W/calls"
		while read -r t; do expect_tcall "$t"; done <"$W/tcalls"
	} >"$W/$name/expected"
	if awk 'NR == FNR { a = $1; $1 = ""; m[a] = substr($0, 2); next }
		{ a = $1; $1 = ""; w = substr($0, 2)
		  if (!(a in m) || m[a] != w) { print "  at 0x" a ": got \"" m[a] "\", want \"" w "\""; bad++ } }
		END { exit bad > 0 }' "$W/out.map" "$W/$name/expected" >"$W/$name/mismatch" &&
		! grep -q '^BAD' "$W/$name/expected" &&
		[ "$(wc -l <"$W/pres")" -gt 0 ] && [ "$(wc -l <"$W/calls")" -gt 0 ]; then
		pass "${name}_sites_disassemble_as_expected ($(wc -l <"$W/pres") preambles, $(wc -l <"$W/calls") call sites, $(wc -l <"$W/tcalls") thunk calls)"
	else
		fail "${name}_sites_disassemble_as_expected" "$(head -5 "$W/$name/mismatch"; grep '^BAD' "$W/$name/expected" | head -3)"
	fi
	if diff_in_sites "$in" "$out" >"$W/$name/outside"; then
		pass "${name}_byte_diff_only_at_sites"
	else
		fail "${name}_byte_diff_only_at_sites" "$(head -3 "$W/$name/outside")"
	fi
	if $READELF -SW "$out" | grep -q ' \.fineibt '; then
		pass "${name}_readelf_lists_fineibt"
	else
		fail "${name}_readelf_lists_fineibt" "no .fineibt section"
	fi
	check_note "$name" "$in" "$out" "$cfi"
}

# The inspect report (from the note) names the mode and the key.
check_note() {
	local name=$1 in=$2 out=$3 cfi=$4 want rep
	want="cfi=$cfi"
	[ "$V618" = 1 ] && want="$want,seq=v6.18"
	[ "$RAND" = 1 ] && want="$want key $KEY"
	rep=$($FI inspect "$out" 2>&1)
	if echo "$rep" | grep -q "^patched: *$want\$"; then
		pass "${name}_inspect_reports_mode"
	else
		fail "${name}_inspect_reports_mode" "want '$want' in: $(echo "$rep" | head -3)"
	fi
}

run_prog() {
	local name=$1 prog=$2 want=$3 got
	shift 3
	got=$(timeout 20 "$prog" "$@" 2>/dev/null; echo "rc=$?")
	got=$(echo $got)
	if [ "$got" = "$want" ]; then
		pass "$name"
	else
		fail "$name" "got '$got', want '$want'"
	fi
}

# ------------------------------------------------------------ the modes

# prog_pie and its DSO, patched together (same mode, same key)
for c in off kcfi kcfi,norand fineibt fineibt,norand fineibt,paranoid \
	 fineibt,paranoid,norand fineibt,warn; do
	n=pie_${c//,/_}
	run_case "$n" "$P/prog_pie" "$c"
	$FI patch -q "$P/libfiprog.so" -o "$W/$n/libfiprog.so" --cfi="$c" --key $KEY ||
		fail "${n}_dso_patch" "exit $?"
	run_prog "${n}_runs" "$W/$n/prog_pie" "ok rc=0"
done
# without de-thunking, the kCFI and plain FineIBT calls keep cs call thunk
for c in kcfi fineibt; do
	n=pie_${c}_nodethunk
	run_case "$n" "$P/prog_pie" "$c" --no-dethunk
	$FI patch -q "$P/libfiprog.so" -o "$W/$n/libfiprog.so" --cfi="$c" \
		--key $KEY --no-dethunk || fail "${n}_dso_patch" "exit $?"
	run_prog "${n}_runs" "$W/$n/prog_pie" "ok rc=0"
done
# BHI: the program linked with the stubs (arity 1 inline without warn)
for c in fineibt,bhi fineibt,bhi,warn fineibt,paranoid,bhi,norand; do
	n=bhi_${c//,/_}
	run_case "$n" "$W/prog_bhi" "$c"
	run_prog "${n}_runs" "$W/$n/prog_bhi" "ok rc=0"
done
# the shared object itself, and the RELR-packed pair
run_case dso_fineibt_paranoid "$P/libfiprog.so" fineibt,paranoid
run_case relr_fineibt "$P/prog_relr" fineibt
$FI patch -q "$P/libfiprog_relr.so" -o "$W/relr_fineibt/libfiprog_relr.so" \
	--cfi=fineibt --key $KEY || fail relr_dso_patch "exit $?"
run_prog relr_fineibt_runs "$W/relr_fineibt/prog_relr" "ok rc=0"
# non-PIE, no arity
run_case nopie_fineibt_paranoid "$P/prog_noarity_nopie" fineibt,paranoid
run_prog nopie_fineibt_paranoid_runs "$W/nopie_fineibt_paranoid/prog_noarity_nopie" "ok rc=0"

# The v6.18 set (fineibt patch --seq=v6.18; docs/sequences.md), the same
# oracle with that set's sequences.
for c in off kcfi fineibt fineibt,paranoid fineibt,paranoid,norand fineibt,warn; do
	n=v618_pie_${c//,/_}
	run_case "$n" "$P/prog_pie" "$c" --seq=v6.18
	$FI patch -q "$P/libfiprog.so" -o "$W/$n/libfiprog.so" --cfi="$c" \
		--key $KEY --seq=v6.18 || fail "${n}_dso_patch" "exit $?"
	run_prog "${n}_runs" "$W/$n/prog_pie" "ok rc=0"
done
for c in kcfi fineibt; do
	n=v618_pie_${c}_nodethunk
	run_case "$n" "$P/prog_pie" "$c" --no-dethunk --seq=v6.18
done
for c in fineibt,bhi fineibt,bhi,warn fineibt,paranoid,bhi,norand; do
	n=v618_bhi_${c//,/_}
	run_case "$n" "$W/prog_bhi" "$c" --seq=v6.18
	run_prog "${n}_runs" "$W/$n/prog_bhi" "ok rc=0"
done
run_prog v618_kcfi_catches_pivot "$W/v618_pie_kcfi/prog_pie" "rc=132" pivot
run_prog v618_fineibt_lets_pivot_through "$W/v618_pie_fineibt/prog_pie" "pivot 2 ok rc=0" pivot
run_prog v618_paranoid_catches_pivot "$W/v618_pie_fineibt_paranoid/prog_pie" "rc=132" pivot
run_prog v618_kcfi_catches_libc "$W/v618_pie_kcfi/prog_pie" "rc=132" libc
run_prog v618_paranoid_catches_naked "$W/v618_pie_fineibt_paranoid/prog_pie" "rc=132" naked
run_prog v618_off_lets_libc_through "$W/v618_pie_off/prog_pie" "libc ok rc=0" libc
mkdir -p "$W/v618_bad"
if $FI patch "$P/prog_pie" -o "$W/v618_bad/out" --seq=v5 2>"$W/v618_bad/err"; then
	fail patch_rejects_unknown_seq "exit 0"
elif grep -qx "fineibt: error: patch: --seq: unknown sequence set 'v5' (v4, v6.18); try 'fineibt help patch'" "$W/v618_bad/err" &&
     [ ! -e "$W/v618_bad/out" ]; then
	pass patch_rejects_unknown_seq
else
	fail patch_rejects_unknown_seq "$(cat "$W/v618_bad/err")"
fi

# off is kcfi,norand with "eb 0c" over the first two bytes of each site
# (objdump cannot follow the code after that jmp.d8, so check the bytes),
# and the unchecked thunk calls made direct, which kcfi leaves to the
# thunks' coarse check (docs/compat.md): at most 6 other bytes each
ncalls=$(call_sites "$P/prog_pie" | wc -l)
ntc=$($FI inspect "$P/prog_pie" | sed -n 's/^thunk calls without check: \([0-9]*\).*/\1/p')
size=$(stat -c %s "$P/prog_pie")
odd=$(cmp -l "$W/pie_kcfi_norand/prog_pie" "$W/pie_off/prog_pie" 2>/dev/null |
	awk -v n=$size '$1 <= n && $1 > 64 { if ($3 == 353 || $3 == 14) k++; else bad++ }
		END { print k + 0, bad + 0 }')
if [ "${odd% *}" = "$((2 * ncalls))" ] && [ "${odd#* }" -le $((6 * ${ntc:-0})) ]; then
	pass off_is_kcfi_with_jmp8_over_each_check
else
	fail off_is_kcfi_with_jmp8_over_each_check "differing bytes (eb/0c, other): $odd; want $((2 * ncalls)) and at most $((6 * ${ntc:-0}))"
fi

# What each mode catches, without any runtime: SIGILL is exit 132.
run_prog kcfi_catches_pivot "$W/pie_kcfi/prog_pie" "rc=132" pivot
run_prog fineibt_lets_pivot_through "$W/pie_fineibt/prog_pie" "pivot 2 ok rc=0" pivot
run_prog paranoid_catches_pivot "$W/pie_fineibt_paranoid/prog_pie" "rc=132" pivot
run_prog paranoid_catches_naked "$W/pie_fineibt_paranoid/prog_pie" "rc=132" naked
run_prog kcfi_catches_libc "$W/pie_kcfi/prog_pie" "rc=132" libc
run_prog off_lets_libc_through "$W/pie_off/prog_pie" "libc ok rc=0" libc

# the stripped copy patches to the same loaded bytes as the original
mkdir -p "$W/stripped"
if $FI patch -q "$P/prog_stripped" -o "$W/stripped/prog_stripped" \
	--cfi=fineibt,paranoid --key $KEY &&
	cp "$W/pie_fineibt_paranoid/libfiprog.so" "$W/stripped/"; then
	seg=$($READELF -lW "$P/prog_pie" | awk '$1 == "LOAD" && / R E / { print $2, $5; exit }')
	o=$((${seg% *})) n=$((${seg#* }))
	if cmp -s <(tail -c +$((o + 1)) "$W/pie_fineibt_paranoid/prog_pie" | head -c $n) \
		  <(tail -c +$((o + 1)) "$W/stripped/prog_stripped" | head -c $n); then
		pass stripped_same_text_as_unstripped
	else
		fail stripped_same_text_as_unstripped "executable segments differ"
	fi
	run_prog stripped_runs "$W/stripped/prog_stripped" "ok rc=0"
else
	fail stripped_patch "fineibt patch failed on the stripped program"
fi

# --in-place: a new file replaces the old name; other links keep the input
mkdir -p "$W/inplace"
cp "$P/prog_noarity" "$W/inplace/prog"
ln "$W/inplace/prog" "$W/inplace/orig"
if $FI patch -q "$W/inplace/prog" --in-place --cfi=fineibt --key $KEY &&
	cmp -s "$W/inplace/orig" "$P/prog_noarity" &&
	$READELF -SW "$W/inplace/prog" | grep -q ' \.fineibt '; then
	pass in_place_replaces_atomically
else
	fail in_place_replaces_atomically "patched in place wrongly"
fi
run_prog in_place_runs "$W/inplace/prog" "ok rc=0"

# ------------------------------------------------------------ errors

# expect_error NAME OUT MESSAGE-REGEX -- patch args...: exit 1, message,
# no OUT and no temporary file left in OUT's directory.
expect_error() {
	local name=$1 out=$2 re=$3 err rc dir want=${WANT_RC:-1}
	shift 4
	dir=$(dirname "$out")
	err=$($FI patch "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc != "$want" ]; then
		fail "$name" "exit $rc, want $want ($err)"
	elif ! echo "$err" | grep -Eq -- "$re"; then
		fail "$name" "message '$err' does not match '$re'"
	elif [ -e "$out" ] && [ "${KEEP_OUT:-0}" = 0 ]; then
		fail "$name" "$out was left behind"
	elif ls -A "$dir" 2>/dev/null | grep -q '^\..*\.[A-Za-z0-9]\{6\}$'; then
		fail "$name" "temporary file left in $dir"
	else
		pass "$name"
	fi
}

E=$W/errors
mkdir -p "$E"
cp "$P/prog_pie" "$E/in"
sum=$(cksum <"$E/in")
KEEP_OUT=1 expect_error error_out_is_in "$E/in" "output is the input file" -- \
	"$E/in" -o "$E/in" --cfi=fineibt
ln -s in "$E/link"
KEEP_OUT=1 expect_error error_out_is_in_by_inode "$E/link" "output is the input file" -- \
	"$E/in" -o "$E/link" --cfi=fineibt
if [ "$(cksum <"$E/in")" = "$sum" ]; then pass error_input_never_modified
else fail error_input_never_modified "the input changed"; fi
expect_error error_already_patched "$E/twice" \
	"already patched \(mode fineibt,paranoid\); patch the original kCFI build" -- \
	"$W/pie_fineibt_paranoid/prog_pie" -o "$E/twice" --cfi=kcfi
expect_error error_already_patched_kcfi "$E/twice2" \
	"already patched \(mode kcfi\)" -- "$W/pie_kcfi/prog_pie" -o "$E/twice2"
expect_error error_not_kcfi "$E/plain" "no kCFI sites" -- \
	"$P/prog_plain" -o "$E/plain" --cfi=fineibt
head -c 1000 "$P/prog_pie" >"$E/truncated"
expect_error error_truncated "$E/trunc.out" "^fineibt: error: .*truncated" -- \
	"$E/truncated" -o "$E/trunc.out"
head -c 4096 /dev/zero >"$E/zeros"
expect_error error_not_elf "$E/zeros.out" "^fineibt: error: .*zeros" -- "$E/zeros" -o "$E/zeros.out"
expect_error error_missing "$E/missing.out" "^fineibt: error: .*missing" -- \
	"$E/missing" -o "$E/missing.out"
expect_error error_bhi_without_stubs "$E/bhi.out" \
	"cfi=bhi needs the BHI stubs \(__bhi_args\) in the image: link the program with the static runtime \(fineibt-cc -static-fineibt\) or drop bhi" -- \
	"$P/prog_pie" -o "$E/bhi.out" --cfi=fineibt,bhi
# fineibt-cc's default link has the stubs in libfineibt.so, not in the
# program: refused the same way (the message said "fineibt-cc does"), and
# the link the message names is patched and runs.
if [ -z "${FINEIBT_SAN:-}" ]; then
	printf 'static int f(int x) { return x; }\nint (*volatile p)(int) = f;\nint main(void) { return p(0); }\n' >"$E/bhi.c"
	if $B/fineibt-cc -O2 -o "$E/bhi_dyn" "$E/bhi.c" &&
	   $B/fineibt-cc -O2 -static-fineibt -o "$E/bhi_static" "$E/bhi.c"; then
		expect_error error_bhi_fineibt_cc_default "$E/bhi_dyn.out" \
			"cfi=bhi needs the BHI stubs .*fineibt-cc -static-fineibt" -- \
			"$E/bhi_dyn" -o "$E/bhi_dyn.out" --cfi=fineibt,bhi
		if $FI patch "$E/bhi_static" -o "$E/bhi_static.out" --cfi=fineibt,bhi -q &&
		   "$E/bhi_static.out"; then
			pass bhi_static_fineibt_patched_runs
		else
			fail bhi_static_fineibt_patched_runs "fineibt-cc -static-fineibt: patch --cfi=fineibt,bhi or its run failed"
		fi
	else
		fail bhi_fineibt_cc_build "cannot build $E/bhi.c with fineibt-cc"
	fi
fi
# A bad --key, --seq or --cfi is a usage error (exit 2), before any file is read.
WANT_RC=2 expect_error error_bad_key "$E/key.out" "want 32 hex digits \(128 bits\)" -- \
	"$P/prog_pie" -o "$E/key.out" --key 9e3779b9
WANT_RC=2 expect_error error_bad_key_digit "$E/key.out" "want 32 hex digits \(128 bits\)" -- \
	"$P/prog_pie" -o "$E/key.out" --key 9e3779b97f4a7c15f39cc0605cedc83x
# --seed (a 32-bit seed, before the 128-bit key): a usage error (exit 2)
# that says what replaced it; nothing written.
err=$($FI patch "$P/prog_pie" -o "$E/seed.out" --seed 1234 2>&1 >/dev/null); rc=$?
if [ $rc = 2 ] && [ "$err" = "fineibt: error: patch: --seed: the rehash key has 128 bits now; pass --key with 32 hex digits; try 'fineibt help patch'" ] &&
   [ ! -e "$E/seed.out" ]; then
	pass error_seed_gone
else
	fail error_seed_gone "rc=$rc, '$err'"
fi
expect_error error_out_dir_missing "$E/nodir/out" "^fineibt: error: " -- \
	"$P/prog_pie" -o "$E/nodir/out"
# e_shnum = 0 (no section headers): refused, never half-written
cp "$P/prog_pie" "$E/noshdr"
printf '\0\0' | dd of="$E/noshdr" bs=1 seek=$((0x3c)) conv=notrunc status=none
expect_error error_no_section_headers "$E/noshdr.out" "^fineibt: error: " -- \
	"$E/noshdr" -o "$E/noshdr.out"

# words whose dependency is missing are reported, not fatal
msg=$($FI patch "$P/prog_pie" -o "$E/ign" --cfi=kcfi,paranoid --key $KEY 2>&1)
if [ $? = 0 ] && echo "$msg" | grep -q "ignoring 'paranoid'" && [ -x "$E/ign" ]; then
	pass ignored_words_not_fatal
else
	fail ignored_words_not_fatal "$msg"
fi
# an unknown word on the command line is a usage error: exit 2, one line, no
# output (FINEIBT_CFI keeps "ignore with a message": tests/unit/test_options)
for bad in bogus "kcfi,paranoia" "fineibt,,warn,bh1"; do
	n=${bad//[^a-z]/_}
	err=$($FI patch "$P/prog_pie" -o "$E/unk_$n" --cfi="$bad" --key $KEY 2>&1)
	rc=$?
	want=${bad##*,}
	if [ $rc = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
	   [[ $err == "fineibt: error: patch: --cfi: unknown word '$want' (valid: auto, "* ]] && [ ! -e "$E/unk_$n" ]; then
		pass "unknown_word_error[$bad]"
	else
		fail "unknown_word_error[$bad]" "rc=$rc, '$err'"
	fi
done

# A file patched by another record version (here: version 2, whose
# hashes were rehashed with a 32-bit seed) is named by inspect and refused
# by the runtime with one fatal line (exit 127), never run with a guessed
# mode and key.
if $FI patch "$P/prog_pie" -o "$E/v1" --cfi=fineibt --key $KEY >/dev/null 2>&1 &&
   python3 - "$E/v1" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sh(i):
    return struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
for i in range(shnum):
    name, _, _, _, off, _ = sh(i)
    if b[stroff + name:stroff + name + 9] == b".fineibt\0":
        assert b[off:off + 4] == b"FIBT"
        b[off + 4] = 2
        open(sys.argv[1], "wb").write(b)
        sys.exit(0)
sys.exit(1)
PY
then
	out=$($FI inspect "$E/v1" 2>&1)
	if grep -q '^patched: *record version 2, not readable' <<<"$out"; then
		pass note_old_version_inspect
	else
		fail note_old_version_inspect "$out"
	fi
	if [ -z "${FINEIBT_SAN:-}" ]; then
		err=$(env -u FINEIBT_CFI LD_LIBRARY_PATH="$P" $FI run -- "$E/v1" 2>&1 >/dev/null); rc=$?
		if [ $rc = 127 ] && grep -q '^fineibt: fatal: .*v1 was patched statically by another fineibt (record version 2' <<<"$err"; then
			pass note_old_version_refused
		else
			fail note_old_version_refused "rc=$rc, '$err'"
		fi
	fi
else
	fail note_old_version "could not patch or edit the record"
fi
# A patched program that carries the runtime (fineibt-cc's demo) runs in
# its file's mode: it says so when FINEIBT_CFI asked for another mode, or
# under FINEIBT_VERBOSE when the default (auto: kcfi) is another, never on
# a plain run.
DEMO=$BUILD/demo/fi-attack
if [ -x "$DEMO" ] && $FI patch "$DEMO" -o "$E/demo_patched" --cfi=fineibt,paranoid -q; then
	NOTE="^fineibt: note: .*demo_patched was patched statically \\(fineibt,paranoid\\); the process uses that mode, not (fineibt|kcfi)\$"
	for how in plain asked verbose; do
		case $how in
		plain) err=$(env -u FINEIBT_CFI -u FINEIBT_VERBOSE "$E/demo_patched" 2>&1 >/dev/null) ;;
		asked) err=$(FINEIBT_CFI=fineibt "$E/demo_patched" 2>&1 >/dev/null) ;;
		verbose) err=$(env -u FINEIBT_CFI FINEIBT_VERBOSE=1 "$E/demo_patched" 2>&1 >/dev/null) ;;
		esac
		if [ $how = plain ] && [ -z "$err" ]; then
			pass "static_note_quiet"
		elif [ $how != plain ] && grep -Eq "$NOTE" <<<"$err"; then
			pass "static_note_$how"
		else
			fail "static_note_$how" "stderr: $err"
		fi
	done
elif [ -z "${FINEIBT_SAN:-}" ]; then
	fail static_note "cannot patch $DEMO"
fi
exit 0
