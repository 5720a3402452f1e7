#!/usr/bin/env bash
# hostile: odd and hostile inputs through inspect, patch and run
# (docs/robustness.md): stripped binaries, no kCFI at all, mixed images
# (objects without kCFI), other function alignments and missing
# -fpatchable-function-entry (refused, or patched and byte-checked),
# FINEIBT_CFI garbage, a statically patched program that loads the
# runtime, and a >= 100k-function binary.
. "$(dirname "$0")/progs/rt_lib.bash"
P=$ROOT/$BUILD/progs
O=$ROOT/$BUILD/e2e/robust
mkdir -p "$O"
bash "$ROOT/tests/progs/build.sh" "$P" || { rt_fail build "tests/progs/build.sh failed"; exit 1; }
export LD_LIBRARY_PATH=$P
LLD=$(command -v ld.lld-22)
KCFI="-fsanitize=kcfi -fsanitize-kcfi-arity -fcf-protection=branch
 -mretpoline-external-thunk -mindirect-branch-cs-prefix -O2 -I$ROOT/tests/progs"

# SAN=1 (make check SAN=1): the runtime is built with ASan and cannot be
# loaded into uninstrumented programs; only the CLI parts run.
rt_ok() {
	[ -z "${FINEIBT_SAN:-}" ] && return 0
	echo "SKIP: $1: runs the runtime inside a program (not under SAN=1)"
	return 1
}

# check NAME COND-STATUS DETAIL
check() { if [ "$2" = 0 ]; then rt_pass "$1"; else rt_fail "$1" "$3"; fi; }

# inspect --json FILE, field FIELD (python one-liner, no jq on CI).
jfield() { "$FIBT" inspect "$1" --json | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"; }

# Every preamble and caller of patched OUT is in the FineIBT form its
# mode promises, at the same addresses as in IN, and nothing unmatched.
verify_patched() {
	python3 - "$FIBT" "$1" "$2" "$3" <<'PY'
import json, subprocess, sys
fibt, src, out, want_call = sys.argv[1:5]
def j(p):
    return json.loads(subprocess.run([fibt, "inspect", p, "--json", "--list"],
                      capture_output=True, text=True, check=True).stdout)
a, b = j(src), j(out)
pa = {p["address"] for p in a["sites"]["preambles"] if p["endbr"]}
pb = {p["address"]: p["form"] for p in b["sites"]["preambles"]}
ca = {c["address"] for c in a["sites"]["calls"]}
cb = {c["address"]: c["form"] for c in b["sites"]["calls"]}
bad = [k for k in pa if pb.get(k) != "fineibt"] + [k for k in ca if cb.get(k) != want_call]
if bad or b["unmatched"] or not pa or set(pb) != {p["address"] for p in a["sites"]["preambles"]}:
    sys.exit("mis-patched: %s unmatched=%s" % (bad[:5], b["unmatched"][:5]))
PY
}

# ---- stripped: every command still works from the SHF_ALLOC metadata
"$FIBT" patch "$P/prog_stripped" -o "$O/stripped.p" --cfi=fineibt,paranoid >/dev/null 2>&1
check "stripped-patch" $? "patch of prog_stripped failed"
verify_patched "$P/prog_stripped" "$O/stripped.p" paranoid
check "stripped-patch-bytes" $? "prog_stripped patched wrong"
# Its DSO is kCFI: the runtime rewrites it with the key the note records.
if rt_ok stripped-run; then
rt_run stripped-static auto "$FIBT" run -- "$O/stripped.p"
check "stripped-patched-runs" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ]; echo $?) "rc=$RT_RC err=$RT_ERR_TXT"
rt_run stripped-pivot auto "$FIBT" run -- "$P/prog_stripped" pivot
check "stripped-run-pivot-caught" $([ "$RT_RC" = 132 ] && grep -qE "$RT_REPORT_RE.*mode: kcfi\)" <<<"$RT_ERR_TXT"; echo $?) \
	"rc=$RT_RC err=$RT_ERR_TXT"
fi

# ---- no kCFI at all
out=$("$FIBT" inspect "$P/prog_plain" 2>&1); rc=$?
check "nokcfi-inspect" $([ $rc = 0 ] && grep -q 'no kCFI sites: nothing to do' <<<"$out"; echo $?) "rc=$rc out=$out"
rm -f "$O/plain.p"
out=$("$FIBT" patch "$P/prog_plain" -o "$O/plain.p" 2>&1); rc=$?
check "nokcfi-patch-refused" $([ $rc = 1 ] && [ ! -e "$O/plain.p" ] && grep -q '^fineibt: error: .*no kCFI sites' <<<"$out"; echo $?) \
	"rc=$rc out=$out"
rt_ok nokcfi-run && for m in $(fi_with_sets auto kcfi off fineibt,bhi); do
	rt_run plain "$m" "$FIBT" run -- "$P/prog_plain"
	# The run's one warning that nothing is checked, and nothing else but
	# the cfi= word messages (bhi: no arity in this program).
	rest=$(grep -v "^fineibt: ignoring 'bhi'" <<<"$RT_ERR_TXT")
	check "nokcfi-run[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ] &&
		grep -qx "fineibt: warning: run: $P/prog_plain: no kCFI checks in it .*" <<<"$rest" &&
		[ "$(wc -l <<<"$rest")" = 1 ]; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	rt_run plain "$m" "$FIBT" run -q -- "$P/prog_plain"
	check "nokcfi-run-quiet[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ] &&
		[ -z "$(grep -v "^fineibt: ignoring 'bhi'" <<<"$RT_ERR_TXT")" ]; echo $?) \
		"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
done

# ---- mixed images: objects without kCFI (plain, and thunk calls without check)
if rt_ok mixed; then
clang-22 -O2 -fPIC -c "$ROOT/tests/e2e/progs/hostile_plain.c" -o "$O/plain_a.o" &&
clang-22 -O2 -fPIC -fcf-protection=branch -mretpoline-external-thunk -mindirect-branch-cs-prefix \
	-c "$ROOT/tests/e2e/progs/hostile_plain.c" -o "$O/plain_b.o" &&
rt_build "$O/mixed_a" -O2 "$ROOT/tests/e2e/progs/hostile_mixed.c" "$O/plain_a.o" &&
rt_build "$O/mixed_b" -O2 "$ROOT/tests/e2e/progs/hostile_mixed.c" "$O/plain_b.o"
check "mixed-build" $? "could not build the mixed programs"
tc=$(jfield "$O/mixed_b" 'j["thunk_calls"]')
check "mixed-has-unchecked-thunk-calls" $([ "${tc:-0}" -ge 2 ]; echo $?) "thunk_calls=$tc"
for v in a b; do
	for m in $(fi_with_sets "${RT_BASE_MODES[@]}" fineibt,paranoid,warn); do
		rt_run "mixed_$v" "$m" "$O/mixed_$v"
		check "mixed-$v[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "mixed 338450" ] && ! grep -q 'CFI failure' <<<"$RT_ERR_TXT"; echo $?) \
			"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	done
	out=
	"$FIBT" patch "$O/mixed_$v" -o "$O/mixed_$v.p" >/dev/null 2>&1 && out=$("$O/mixed_$v.p" 2>&1)
	check "mixed-$v-static" $([ "$out" = "mixed 338450" ]; echo $?) "out=$out"
done
fi

# ---- other alignments, other or no patchable entries
S=$ROOT/tests/progs
for v in "align32:-fpatchable-function-entry=11,11 -falign-functions=32" \
	 "align64:-fpatchable-function-entry=11,11 -falign-functions=64" \
	 "nopfe:-falign-functions=16" \
	 "pfe5:-fpatchable-function-entry=5,5 -falign-functions=16" \
	 "pfe11after:-fpatchable-function-entry=11 -falign-functions=16"; do
	n=${v%%:*}
	# shellcheck disable=SC2086
	[ "$O/$n" -nt "$S/prog.c" ] || clang-22 $KCFI ${v#*:} --ld-path="$LLD" -fPIE -pie \
		-o "$O/$n" "$S/prog.c" "$S/naked.S" "$S/thunk.S" || { rt_fail "$n-build" clang; continue; }
	rm -f "$O/$n.p"
	out=$("$FIBT" patch "$O/$n" -o "$O/$n.p" --cfi=fineibt,paranoid 2>&1); rc=$?
	case $n in
	align*)
		check "$n-patched-bytes" $([ $rc = 0 ] && verify_patched "$O/$n" "$O/$n.p" paranoid; echo $?) "rc=$rc out=$out"
		o1=$("$O/$n.p" 2>&1); { "$O/$n.p" pivot; r2=$?; } >/dev/null 2>&1
		check "$n-patched-runs" $([ "$o1" = ok ] && [ $r2 = 132 ]; echo $?) "out=$o1 pivot rc=$r2" ;;
	*)
		# Refused with the reason (the layout, not "no kCFI"), and
		# inspect names it too.
		check "$n-refused" $([ $rc = 1 ] && [ ! -e "$O/$n.p" ] &&
			grep -q '^fineibt: error: .*cannot be rewritten: .*-fpatchable-function-entry=11,11' <<<"$out"; echo $?) "rc=$rc out=$out"
		out=$("$FIBT" inspect "$O/$n" 2>&1); rc=$?
		check "$n-inspect-layout" $([ $rc = 0 ] && grep -q '^layout: .*cannot be rewritten' <<<"$out" &&
			"$FIBT" inspect --json "$O/$n" | grep -q '"rewritable": false'; echo $?) "rc=$rc out=$out" ;;
	esac
	rt_ok "$n-run" || continue
	rt_run "$n" auto "$FIBT" run -- "$O/$n"
	case $n in
	align*) check "$n-run" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ]; echo $?) "rc=$RT_RC err=$RT_ERR_TXT" ;;
	*)	# Runs as compiled, with one warning naming the flag.
		check "$n-run" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ] &&
			[ "$(grep -c 'left as compiled, not rewritten: .*fpatchable-function-entry=11,11' <<<"$RT_ERR_TXT")" = 1 ]; echo $?) \
			"rc=$RT_RC err=$RT_ERR_TXT" ;;
	esac
done

# ---- a library built by stock clang with -fsanitize=kcfi alone, dlopen'ed
# by a fineibt-cc program: it used to be taken for uninstrumented, with no
# word, then left as compiled with one warning; now the stock bridge
# rewrites it (docs/compat.md, "Stock kCFI modules"): no warning, and the
# call through dlsym's pointer still works.
if rt_ok unprefixed-lib; then
	E=$ROOT/tests/e2e/progs
	# its pointer types generalized as fineibt-cc's are (docs/compat.md)
	{ clang-22 -O2 -fPIC -shared -fsanitize=kcfi -fsanitize-cfi-icall-generalize-pointers \
		"$E/protect_lib.c" -o "$O/libunprefixed.so" &&
	  "$FCC" -O2 "$E/hostile_dlopen.c" -o "$O/hostile_dlopen"; } || rt_fail unprefixed-lib-build clang
	for m in kcfi fineibt auto; do
		rt_run unprefixed-lib "$m" "$O/hostile_dlopen" "$O/libunprefixed.so"
		check "unprefixed-lib[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ] &&
			! grep -q 'left as compiled' <<<"$RT_ERR_TXT"; echo $?) \
			"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	done
fi

# ---- a program built by stock clang with -fsanitize=kcfi and patchable
# entries but not the thunk flags: its checks use any register, none is a
# site we rewrite. Its preambles used to be rewritten all the same (new
# hashes its checks never saw): its first call through a pointer to its
# own function died under `fineibt run`. Then it was left as compiled,
# with one warning; now the stock bridge moves its checks' loads with its
# preambles (docs/compat.md), with no warning and no report.
if rt_ok nothunk; then
	E=$ROOT/tests/e2e/progs
	clang-22 -O2 -fsanitize=kcfi -fpatchable-function-entry=11,11 -fcf-protection=branch \
		"$E/hostile_nothunk.c" -o "$O/hostile_nothunk" || rt_fail nothunk-build clang
	for m in kcfi fineibt auto warn; do
		rt_run nothunk "$m" "$FIBT" run -- "$O/hostile_nothunk"
		check "nothunk[$m]" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = 70 ] &&
			! grep -q 'left as compiled' <<<"$RT_ERR_TXT" &&
			! grep -q 'CFI failure' <<<"$RT_ERR_TXT"; echo $?) \
			"rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	done
fi

# ---- FINEIBT_CFI garbage: default mode (auto = kcfi catches the pivot), messages
long=$(head -c 20000 /dev/zero | tr '\0' 'x')
i=0
rt_ok cfi-garbage && for g in "$long" "$(printf 'caf\xc3\xa9,\xff\xfe\x01,\x1b[31m')" ",,,,,,,," "  ,  , " "paranoid,bhi,warp" "$long,$long"; do
	i=$((i + 1))
	rt_run garbage "$g" env FINEIBT_VERBOSE=1 "$FIBT" run -- "$P/prog_pie" pivot
	ok=$([ "$RT_RC" = 132 ] && grep -q 'rewritten to kcfi ' <<<"$RT_ERR_TXT" &&
	     grep -qE "$RT_REPORT_RE.*mode: kcfi\)" <<<"$RT_ERR_TXT"; echo $?)
	# Words that are not empty are reported; each message stays one bounded line.
	if [ "$ok" = 0 ] && [ "$i" != 3 ] && [ "$i" != 4 ]; then
		grep -q "^fineibt: ignoring '" <<<"$RT_ERR_TXT" || ok=1
		[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' <<<"$RT_ERR_TXT")" -le 4096 ] || ok=1
	fi
	check "cfi-garbage-$i" "$ok" "rc=$RT_RC err=$(head -c 400 <<<"$RT_ERR_TXT")"
	rt_run garbage-ok "$g" "$FIBT" run -- "$P/prog_pie"
	check "cfi-garbage-$i-runs" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ]; echo $?) "rc=$RT_RC"
done

# ---- statically patched program + runtime: left alone, traps decoded
"$FIBT" patch "$P/prog_pie" -o "$O/static.p" --cfi=fineibt,paranoid --key 00000000000000000000000000001234 >/dev/null 2>&1
cp "$O/static.p" "$O/static.orig"
if rt_ok static-plus-runtime; then
rt_run static kcfi env FINEIBT_VERBOSE=1 "$FIBT" run -- "$O/static.p" naked
check "static-plus-runtime" $([ "$RT_RC" = 132 ] && grep -q 'static.p: kept static fineibt,paranoid' <<<"$RT_ERR_TXT" &&
	grep -qE "$RT_REPORT_RE"'naked_endbr\+0x0; .*mode: fineibt,paranoid\)' <<<"$RT_ERR_TXT" && cmp -s "$O/static.p" "$O/static.orig"; echo $?) \
	"rc=$RT_RC err=$RT_ERR_TXT"
rt_run static-ok auto "$FIBT" run -- "$O/static.p"
check "static-plus-runtime-runs" $([ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = ok ]; echo $?) "rc=$RT_RC err=$RT_ERR_TXT"
fi
rm -f "$O/static.pp"
out=$("$FIBT" patch "$O/static.p" -o "$O/static.pp" 2>&1); rc=$?
check "static-repatch-refused" $([ $rc = 1 ] && [ ! -e "$O/static.pp" ]; echo $?) "rc=$rc out=$out"

# ---- very large binaries (>= 100k functions): inspect, patch, run
# Always: hostile_big.py's assembly twin (builds in seconds; running it
# makes 100k indirect calls, each through a rewritten caller and
# preamble). Also the clang-built bench/gen_big.py program when one exists
# (bench's, or ours built once with FINEIBT_TEST_BIG=1: ~3 min on 2 cores).
bigs=()
if [ "$O/big_asm" -nt "$ROOT/tests/e2e/progs/hostile_big.py" ] ||
   { python3 "$ROOT/tests/e2e/progs/hostile_big.py" "$O/big_asm.s" 100000 &&
     clang-22 -c "$O/big_asm.s" -o "$O/big_asm.o" &&
     clang-22 --ld-path="$LLD" -pie -o "$O/big_asm" "$O/big_asm.o" && rm -f "$O/big_asm.s"; }; then
	bigs+=("$O/big_asm:42")
else
	rt_fail big-asm-build "could not build the 100k-function assembly program"
fi
for b in "$ROOT/$BUILD/bench/big/big_100000" "$O/big/big_100000"; do
	[ -x "$b" ] && bigs+=("$b:0") && break
done
if [ "${#bigs[@]}" = 1 ] && [ "${FINEIBT_TEST_BIG:-0}" = 1 ]; then
	mkdir -p "$O/big" && rm -f "$O"/big/*.c "$O"/big/*.o &&
	python3 "$ROOT/bench/gen_big.py" "$O/big" 100000 20 >/dev/null &&
	ls "$O"/big/*.c | xargs -P2 -I{} sh -c "clang-22 -O1 -fsanitize=kcfi -fsanitize-kcfi-arity \
		-fpatchable-function-entry=11,11 -falign-functions=16 -fcf-protection=branch \
		-mretpoline-external-thunk -mindirect-branch-cs-prefix -c {} -o {}.o" &&
	clang-22 -c "$S/thunk.S" -o "$O/big/thunk.o" &&
	clang-22 --ld-path="$LLD" -pie -o "$O/big/big_100000" "$O"/big/*.o &&
	bigs+=("$O/big/big_100000:0")
fi
[ "${#bigs[@]}" = 1 ] && echo "SKIP: big-clang: no clang-built 100k-function program (FINEIBT_TEST_BIG=1 builds one)"
for e in "${bigs[@]}"; do
	big=${e%:*} want=${e##*:} n=big-${e##*/}; n=${n%%:*}
	np=$(jfield "$big" 'j["preambles"]')
	check "$n-inspect" $([ "${np:-0}" -ge 100000 ]; echo $?) "preambles=$np"
	rm -f "$O/$n.p"
	"$FIBT" patch "$big" -o "$O/$n.p" --cfi=fineibt,paranoid >/dev/null 2>&1
	check "$n-patch" $? "patch failed"
	r=$(jfield "$O/$n.p" 'str(j["preambles"]) + " " + j["mode"] + " " + str(len(j["unmatched"]))')
	check "$n-patch-verified" $([ "$r" = "$np fineibt,paranoid 0" ]; echo $?) "got '$r'"
	"$O/$n.p" >/dev/null 2>&1; rc=$?
	check "$n-patched-runs" $([ $rc = "$want" ]; echo $?) "rc=$rc, want $want"
	rt_ok "$n-runtime-runs" || continue
	rt_run "$n" auto "$FIBT" run -- "$big"
	check "$n-runtime-runs" $([ "$RT_RC" = "$want" ] && [ -z "$RT_ERR_TXT" ]; echo $?) "rc=$RT_RC err=$RT_ERR_TXT"
done
