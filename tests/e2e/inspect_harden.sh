#!/usr/bin/env bash
# inspect_harden: the hardening audit of `fineibt inspect` (docs/inspect.md):
# RELRO (full/partial/none), BIND_NOW, writable GOT, executable stack and
# text relocations, in text ("hardening:" line, one "audit:" line per
# hole) and --json (relro, bind_now, writable_got, exec_stack, textrel,
# audit). Files built to have each property (fineibt-cc's default, its
# --fineibt-no-relro, -z norelro, -z execstack, a text relocation); every
# field is also checked against llvm-readelf-22's view of the same file.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
OUT=$ROOT/$BUILD/e2e/inspect_harden
FCC=$ROOT/$BUILD/fineibt-cc
FI=$ROOT/$BUILD/fineibt
READELF=llvm-readelf-22
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

cat >"$OUT/prog.c" <<'EOF'
#include <stdio.h>
static int twice(int x) { return 2 * x; }
int (*volatile fp)(int) = twice;
int main(void) { printf("%d\n", fp(21)); return 0; }
EOF
# A text relocation: an absolute address in the code of a shared object.
cat >"$OUT/textrel.S" <<'EOF'
	.text
	.globl	tr_addr
tr_addr:
	movabsq	$tr_data, %rax
	ret
	.data
tr_data:
	.quad	0
	.section .note.GNU-stack,"",@progbits
EOF

b() { local out=$1; shift; "$@" -o "$OUT/$out" || { fail "build[$out]" "$*"; exit 1; }; }
b default "$FCC" -O2 "$OUT/prog.c"
b default.so "$FCC" -O2 -fPIC -shared "$OUT/prog.c"
b norelro "$FCC" -O2 --fineibt-no-relro "$OUT/prog.c"
b none "$FCC" -O2 -Wl,-z,norelro "$OUT/prog.c"	# -z now stays: RELRO none, BIND_NOW
b execstack "$FCC" -O2 -Wl,-z,execstack "$OUT/prog.c"
b textrel.so clang-22 -shared -fuse-ld=lld-22 -Wl,-z,notext "$OUT/textrel.S" 2>/dev/null ||
	b textrel.so clang-22 -shared --ld-path="$(command -v ld.lld-22)" -Wl,-z,notext "$OUT/textrel.S"

# The oracle: llvm-readelf's view as the JSON fields inspect must give.
oracle() {
	local f=$1 dyn ph sec relro=none bn=false ge=false es=false tr=false
	dyn=$($READELF -dW "$f") ph=$($READELF -lW "$f") sec=$($READELF -SW "$f")
	grep -Eq '\(BIND_NOW\)|\(FLAGS\).*BIND_NOW|\(FLAGS_1\).* NOW' <<<"$dyn" && bn=true
	grep -q GNU_RELRO <<<"$ph" && { [ $bn = true ] && relro=full || relro=partial; }
	grep -E 'GNU_STACK' <<<"$ph" | grep -q 'RWE' && es=true
	grep -q GNU_STACK <<<"$ph" || es=true
	grep -Eq '\(TEXTREL\)|\(FLAGS\).*TEXTREL' <<<"$dyn" && tr=true
	# A GOT outside RELRO, or .got.plt under lazy binding, stays writable.
	python3 - "$ph" "$sec" "$bn" <<'PY' && ge=true
import re, sys
ph, sec, bn = sys.argv[1], sys.argv[2], sys.argv[3] == "true"
r = [l.split() for l in ph.splitlines() if l.strip().startswith("GNU_RELRO")]
lo, hi = (int(r[0][2], 16), int(r[0][2], 16) + int(r[0][5], 16)) if r else (0, 0)
for l in sec.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\.got(?:\.plt)?)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
    if not m or not int(m.group(3), 16):
        continue
    a, z = int(m.group(2), 16), int(m.group(3), 16)
    if not r or a < lo or a + z > hi or (m.group(1) == ".got.plt" and not bn):
        sys.exit(0)
sys.exit(1)
PY
	echo "{\"relro\": \"$relro\", \"bind_now\": $bn, \"writable_got\": $ge, \"exec_stack\": $es, \"textrel\": $tr}"
}

# check FILE RELRO BIND_NOW WRITABLE_GOT EXEC_STACK TEXTREL NFINDINGS
check() {
	local f=$OUT/$1 want got
	want="{\"relro\": \"$2\", \"bind_now\": $3, \"writable_got\": $4, \"exec_stack\": $5, \"textrel\": $6}"
	"$FI" inspect "$f" --json >"$f.json" || { fail "inspect[$1]" "exit $?"; return; }
	got=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({k: j[k] for k in ("relro", "bind_now", "writable_got", "exec_stack", "textrel")}))
n = int(sys.argv[2])
assert len(j["audit"]) == n, "want %d findings, got %r" % (n, j["audit"])
' "$f.json" "$7") || { fail "json[$1]" "$(cat "$f.json" | tail -3)"; return; }
	if [ "$got" != "$want" ]; then
		fail "json[$1]" "got $got, want $want"
	elif [ "$(oracle "$f")" != "$want" ]; then
		fail "oracle[$1]" "llvm-readelf says $(oracle "$f"), test wants $want"
	elif [ "$("$FI" inspect "$f" | grep -c '^  audit: ')" != "$7" ]; then
		fail "text[$1]" "$("$FI" inspect "$f")"
	else
		pass "audit[$1]: relro=$2 bind_now=$3 writable_got=$4 exec_stack=$5 textrel=$6 ($7 findings)"
	fi
}

check default full true false false false 0
check default.so full true false false false 0
check norelro partial false true false false 2
check none none true true false false 2
check execstack full true false true false 1
check textrel.so partial false true false true 3

# The text form names each hole and says what to do.
t=$("$FI" inspect "$OUT/norelro")
if grep -q '^hardening:     RELRO partial; GOT writable;' <<<"$t" &&
   grep -q '^  audit: writable GOT: .*(link with -z relro -z now; fineibt-cc does)$' <<<"$t"; then
	pass "text: hardening line and audit findings"
else
	fail text "$t"
fi
# fineibt-cc warns when the caller asks for -z norelro (docs/protection.md,
# "-z norelro"): in each spelling, at link time only, and never otherwise.
nr=0
for spell in "-Wl,-z,norelro" "-Wl,-znorelro" "-z norelro" "-Xlinker -z -Xlinker norelro"; do
	# shellcheck disable=SC2086  # the spelling is several arguments
	"$FCC" -O2 $spell "$OUT/prog.c" -o "$OUT/nr" 2>"$OUT/nr.err" &&
		grep -q '^fineibt-cc: warning: -z norelro leaves .got, .init_array and .fini_array writable' "$OUT/nr.err" &&
		nr=$((nr + 1))
done
"$FCC" -O2 "$OUT/prog.c" -o "$OUT/nr" 2>"$OUT/nr.err" && ! grep -q norelro "$OUT/nr.err" && nr=$((nr + 1))
"$FCC" -O2 -Wl,-z,relro "$OUT/prog.c" -o "$OUT/nr" 2>"$OUT/nr.err" && ! grep -q norelro "$OUT/nr.err" && nr=$((nr + 1))
"$FCC" -O2 -c -Wl,-z,norelro "$OUT/prog.c" -o "$OUT/nr.o" 2>"$OUT/nr.err" && ! grep -q fineibt-cc "$OUT/nr.err" && nr=$((nr + 1))
if [ $nr = 7 ]; then
	pass "driver: -z norelro warned in 4 spellings, not on a default, relro or -c build"
else
	fail driver-norelro "$nr of 7 cases as expected; last stderr: $(cat "$OUT/nr.err")"
fi
# -z lazy likewise (docs/protection.md, "A writable GOT"): five spellings
# warned, a -z now, a default and a -c build not (nor the norelro warning).
zl=0
for spell in "-Wl,-z,lazy" "-Wl,-zlazy" "-z lazy" "-Xlinker -z -Xlinker lazy" "-Xlinker -zlazy"; do
	# shellcheck disable=SC2086  # the spelling is several arguments
	"$FCC" -O2 $spell "$OUT/prog.c" -o "$OUT/zl" 2>"$OUT/zl.err" &&
		grep -q "^fineibt-cc: warning: -z lazy leaves the GOT's PLT slots writable" "$OUT/zl.err" &&
		! grep -q norelro "$OUT/zl.err" && zl=$((zl + 1))
done
"$FCC" -O2 -Wl,-z,now "$OUT/prog.c" -o "$OUT/zl" 2>"$OUT/zl.err" && ! grep -q lazy "$OUT/zl.err" && zl=$((zl + 1))
"$FCC" -O2 "$OUT/prog.c" -o "$OUT/zl" 2>"$OUT/zl.err" && ! grep -q lazy "$OUT/zl.err" && zl=$((zl + 1))
"$FCC" -O2 -c -Wl,-z,lazy "$OUT/prog.c" -o "$OUT/zl.o" 2>"$OUT/zl.err" && ! grep -q fineibt-cc "$OUT/zl.err" && zl=$((zl + 1))
if [ $zl = 8 ]; then
	pass "driver: -z lazy warned in 5 spellings, not on a -z now, default or -c build"
else
	fail driver-lazy "$zl of 8 cases as expected; last stderr: $(cat "$OUT/zl.err")"
fi
t=$("$FI" inspect "$OUT/default")
if grep -q '^hardening:     RELRO full (BIND_NOW); GOT read-only; stack not executable; no text relocations$' <<<"$t" &&
   ! grep -q 'audit:' <<<"$t"; then
	pass "text: a fineibt-cc default build has no finding"
else
	fail text-default "$t"
fi
exit 0
