#!/usr/bin/env bash
# inspect_ext: `fineibt inspect --diff A B` (a kCFI build against its
# statically patched copies and against another build) and `fineibt
# inspect --pid PID` (a running program in several modes, read from its
# memory). Counts are checked against `fineibt inspect --json` of each
# file. docs/ecosystem.md.
set -u
BUILD=${BUILD:-build}
ROOT=${FINEIBT_ROOT:-$PWD}
OUT=$ROOT/$BUILD/e2e/ecosystem/inspect_ext
FCC=$ROOT/$BUILD/fineibt-cc
FI=$ROOT/$BUILD/fineibt
rm -rf "$OUT"
mkdir -p "$OUT"
unset FINEIBT_CFI FINEIBT_LOG LD_PRELOAD

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
check() {	# check NAME WHY CMD...
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}
# jq-free JSON field access: jget FILE EXPR (python3 expression on j)
jget() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

cat >"$OUT/lib.c" <<'EOF'
int lib_apply(int (*f)(int), int x) { return f(x) + 0 * x; }
static int lib_neg(int x) { return -x; }
int (*lib_fn(void))(int) { return lib_neg; }
EOF
cat >"$OUT/prog.c" <<'EOF'
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>
static int twice(int x) { return 2 * x; }
static int thrice(int x) { return 3 * x; }
#ifdef EXTRA
int extra(int x) { return x + 1; }
#endif
int (*volatile tab[])(int) = { twice, thrice,
#ifdef EXTRA
	extra,
#endif
};
int lib_apply(int (*f)(int), int x);
int (*lib_fn(void))(int);
int main(int argc, char **argv)
{
	char c;
	/* Let a sibling (fineibt inspect --pid) read us under yama scope 1. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	printf("ready %d\n", tab[0](21) + tab[1](0) + lib_apply(lib_fn(), 0));
	fflush(stdout);
	while (argc > 1 && read(0, &c, 1) > 0)
		;
	return 0;
}
EOF
"$FCC" -O2 -fPIC -shared -o "$OUT/liblib.so" "$OUT/lib.c" &&
"$FCC" -O2 -o "$OUT/a" "$OUT/prog.c" -L"$OUT" -llib -Wl,-rpath,"$OUT" ||
	{ fail inspect_ext_build "fineibt-cc failed"; exit 0; }
"$FCC" -O2 -DEXTRA -o "$OUT/b" "$OUT/prog.c" -L"$OUT" -llib -Wl,-rpath,"$OUT"
"$FI" inspect "$OUT/liblib.so" --json >"$OUT/lib.json"
LPRE=$(jget "$OUT/lib.json" 'j["preambles"]')
LPRE_ENDBR=$(jget "$OUT/lib.json" 'j["preambles"] - j["preambles_without_endbr"]')
LCALL=$(jget "$OUT/lib.json" 'j["call_sites"]')
# auto by the kernel's rule: fineibt,paranoid with user IBT (the test
# hook: docs/runtime.md), kcfi without (a.autok).
FINEIBT_TEST_USER_IBT=1 "$FI" patch "$OUT/a" -o "$OUT/a.auto" --cfi=auto --key 1234abcd1234abcd1234abcd1234abcd -q
"$FI" patch "$OUT/a" -o "$OUT/a.autok" --cfi=auto --key 1234abcd1234abcd1234abcd1234abcd -q
"$FI" patch "$OUT/a" -o "$OUT/a.kcfi" --cfi=kcfi --key 1234abcd1234abcd1234abcd1234abcd -q
"$FI" patch "$OUT/a" -o "$OUT/a.norand" --cfi=kcfi,norand -q
"$FI" inspect "$OUT/a" --json >"$OUT/a.json"
NPRE=$(jget "$OUT/a.json" 'j["preambles"]')
NPRE_ENDBR=$(jget "$OUT/a.json" 'j["preambles"] - j["preambles_without_endbr"]')
NCALL=$(jget "$OUT/a.json" 'j["call_sites"]')

# diff_row OUTFILE KIND: "a b unchanged form hash only-a only-b"
diff_row() { awk -v k="$2" '$1 == k { print $2, $3, $4, $5, $6, $7, $8 }' "$1"; }

"$FI" inspect --diff "$OUT/a" "$OUT/a.auto" >"$OUT/d.auto" 2>&1
check diff_auto_preambles "row: $(diff_row "$OUT/d.auto" preambles)" \
	test "$(diff_row "$OUT/d.auto" preambles)" = "$NPRE $NPRE $((NPRE - NPRE_ENDBR)) $NPRE_ENDBR $NPRE_ENDBR 0 0"
check diff_auto_calls "row: $(diff_row "$OUT/d.auto" call_sites)" \
	test "$(diff_row "$OUT/d.auto" call_sites)" = "$NCALL $NCALL 0 $NCALL $NCALL 0 0"
check diff_auto_modes "header: $(head -2 "$OUT/d.auto" | tr '\n' ' ')" \
	sh -c "grep -q '^a: .*/a (kcfi)' '$OUT/d.auto' && grep -q '^b: .*/a.auto (fineibt,paranoid, patched)' '$OUT/d.auto'"

"$FI" inspect --diff "$OUT/a" "$OUT/a.autok" >"$OUT/d.autok" 2>&1
check diff_auto_no_ibt_is_kcfi "header: $(head -2 "$OUT/d.autok" | tr '\n' ' ')" \
	grep -q '^b: .*/a.autok (kcfi, patched)' "$OUT/d.autok"
"$FI" inspect --diff "$OUT/a" "$OUT/a.kcfi" >"$OUT/d.kcfi" 2>&1
check diff_kcfi_rand_hash_only "row: $(diff_row "$OUT/d.kcfi" call_sites)" \
	test "$(diff_row "$OUT/d.kcfi" call_sites)" = "$NCALL $NCALL 0 0 $NCALL 0 0"
"$FI" inspect --diff "$OUT/a" "$OUT/a.norand" >"$OUT/d.norand" 2>&1
check diff_kcfi_norand_unchanged "row: $(diff_row "$OUT/d.norand" preambles)" \
	test "$(diff_row "$OUT/d.norand" preambles)" = "$NPRE $NPRE $NPRE 0 0 0 0"

"$FI" inspect --diff "$OUT/a" "$OUT/a.auto" --list >"$OUT/d.list" 2>&1
check diff_list_lines "$(grep -c '^    preamble ' "$OUT/d.list") preamble lines, want $NPRE_ENDBR" \
	test "$(grep -c '^    preamble ' "$OUT/d.list")" = "$NPRE_ENDBR"
check diff_list_names "no 'preamble twice kcfi 0x... -> fineibt 0x...' line" \
	grep -Eq '^    preamble twice +kcfi 0x[0-9a-f]{8} -> fineibt 0x[0-9a-f]{8}$' "$OUT/d.list"
"$FI" inspect --diff "$OUT/a" "$OUT/a.auto" --list --json >"$OUT/d.json" 2>&1
check diff_json "invalid JSON or counts" \
	test "$(jget "$OUT/d.json" 'j["kinds"]["call_sites"]["form_changed"] == '"$NCALL"' and len([c for c in j["changes"] if c["kind"] == "call"]) == '"$NCALL")" = True

# Two builds: b has one more function (extra), matched by name.
"$FI" inspect --diff "$OUT/a" "$OUT/b" --list >"$OUT/d.ab" 2>&1
check diff_builds_added "row: $(diff_row "$OUT/d.ab" preambles)" \
	test "$(awk '$1 == "preambles" { print $7, $8 }' "$OUT/d.ab")" = "0 1"
check diff_builds_list "no '+ preamble extra' line" grep -Eq '^  \+ preamble extra ' "$OUT/d.ab"

"$FI" inspect --diff "$OUT/a" >/dev/null 2>&1
check diff_usage "one file: exit $?, want 2" test $? = 2
"$FI" inspect --diff "$OUT/a" "$OUT/nope" >/dev/null 2>"$OUT/d.err"
check diff_missing "missing file: exit $?, want 1 + fineibt: error" \
	sh -c "[ $? = 1 ] && grep -q '^fineibt: error: ' '$OUT/d.err'"

# ------------------------------------------------------------------ --pid
# pid_inspect CMD...: start CMD wait paused on a FIFO, inspect it, let it go.
pid_inspect() {
	local fifo=$OUT/fifo pid
	rm -f "$fifo"
	mkfifo "$fifo"
	"$@" wait <"$fifo" >"$OUT/pid.out" 2>&1 &
	pid=$!
	exec 7>"$fifo"
	for _ in $(seq 50); do
		grep -q ready "$OUT/pid.out" 2>/dev/null && break
		sleep 0.05
	done
	"$FI" inspect --pid "$pid" >"$OUT/pid.txt" 2>&1
	PID_RC=$?
	"$FI" inspect --pid "$pid" --json >"$OUT/pid.json" 2>&1
	exec 7>&-
	wait "$pid"
}
# pid_run CFI: the program itself in mode CFI
pid_run() { pid_inspect env FINEIBT_CFI="$1" "$OUT/a"; }
# pid_line [MODULE]: the row of the program itself (or of MODULE)
pid_line() { awk -v p="${1:-$OUT/a}" '$1 == p { print $2, $3, $4, $5 }' "$OUT/pid.txt"; }

pid_run auto
check pid_auto_no_ibt "rc=$PID_RC row: $(pid_line)" \
	test "$PID_RC $(pid_line)" = "0 kcfi 0/$NPRE 0/$NCALL present"
FINEIBT_TEST_USER_IBT=1 pid_run auto
check pid_auto "rc=$PID_RC row: $(pid_line)" \
	test "$PID_RC $(pid_line)" = "0 fineibt,paranoid $NPRE_ENDBR/$NPRE $NCALL/$NCALL present"
check pid_auto_library "row: $(pid_line "$OUT/liblib.so")" \
	test "$(pid_line "$OUT/liblib.so")" = "fineibt,paranoid $LPRE_ENDBR/$LPRE $LCALL/$LCALL present"
check pid_auto_only_kcfi_modules "rows: $(sed -n '3,$p' "$OUT/pid.txt" | awk '{print $1}' | tr '\n' ' ')" \
	test "$(sed -n '3,$p' "$OUT/pid.txt" | wc -l)" = 2
check pid_auto_no_hashes "a hash-like value is printed: $(grep -Eo '0x[0-9a-f]{8}' "$OUT/pid.txt" "$OUT/pid.json" | head -1)" \
	sh -c "! grep -Eq '[0-9a-f]{8}' '$OUT/pid.txt' '$OUT/pid.json'"
check pid_auto_json "JSON" test "$(jget "$OUT/pid.json" '[m for m in j["modules"] if m["module"] == "'"$OUT/a"'"][0]["key"] == True and j["env_cfi"] == "auto"')" = True
pid_run fineibt,bhi
check pid_bhi "row: $(pid_line)" test "$(pid_line)" = "fineibt,bhi $NPRE_ENDBR/$NPRE $NCALL/$NCALL present"
pid_run kcfi
check pid_kcfi_rand "row: $(pid_line)" test "$(pid_line)" = "kcfi 0/$NPRE 0/$NCALL present"
pid_run kcfi,norand
check pid_kcfi_norand "row: $(pid_line)" test "$(pid_line)" = "kcfi,norand 0/$NPRE 0/$NCALL none"
check pid_no_such "want exit 1 + fineibt: error" \
	sh -c "'$FI' inspect --pid 999999999 2>&1 | grep -q '^fineibt: error: '"
# A stock kCFI build (plain clang -fsanitize=kcfi) under fineibt run: its
# call sites are counted in the rewr/calls total as 'inspect FILE' counts
# them (stock_sites; they stay caller checks, so none is "rewritten"). The
# table said 0/0 for them.
if clang-22 -fsanitize=kcfi -O2 -fPIC -shared -o "$OUT/libslib.so" "$OUT/lib.c" &&
   clang-22 -fsanitize=kcfi -O2 -o "$OUT/s" "$OUT/prog.c" -L"$OUT" -lslib -Wl,-rpath,"$OUT"; then
	"$FI" inspect "$OUT/s" --json >"$OUT/s.json"
	SCALL=$(jget "$OUT/s.json" 'j["stock_sites"]')
	pid_inspect "$FI" run --cfi=kcfi -- "$OUT/s"
	check pid_stock_calls "stock_sites $SCALL, row: $(pid_line "$OUT/s")" \
		test "$SCALL" -gt 0 -a "$(pid_line "$OUT/s" | awk '{print $3}')" = "0/$SCALL"
	check pid_stock_calls_json "JSON: $(head -c 300 "$OUT/pid.json")" \
		test "$(jget "$OUT/pid.json" '[m for m in j["modules"] if m["module"] == "'"$OUT/s"'"][0]["call_sites"]')" = "$SCALL"
else
	fail pid_stock_build "clang-22 -fsanitize=kcfi failed"
fi
exit 0
