#!/usr/bin/env bash
# rt_direct: fineibt-cc's post-link pass (driver/direct.c) moves direct
# calls and tail jumps past the callee's ENDBR. Checks: every direct
# branch to a function that starts with endbr64 lands at +4 (none at +0),
# the thunk calls of the kCFI sites are untouched, the relocation sections
# the pass needed are gone, `fineibt inspect` sees the same sites as the
# build without the pass, and the program prints the plain clang-22
# result in every mode; type-confused calls still trap; the switches
# (--fineibt-no-skip-endbr, FINEIBT_CC_SKIP_ENDBR=0) and a user's own
# -Wl,--emit-relocs or -s leave the calls alone; a shared object too.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/direct
rm -rf "$D"
mkdir -p "$D"
ok() { if "$@"; then rt_pass "$T"; else rt_fail "$T" "${WHY:-check failed}"; fi; }
# okc 'A && B': every part of a compound condition counts.
okc() { if eval "$1"; then rt_pass "$T"; else rt_fail "$T" "${WHY:-check failed}"; fi; }
SRC=$RT_SRC/rt_direct.c

# direct_branches BIN: "target" per direct call/jmp/jcc into a symbol
# (PLT and thunks excluded), e.g. "d_one+0x4" or "d_static".
direct_branches() {
	llvm-objdump-22 -d --no-show-raw-insn "$1" |
		sed -n -E 's/^ *[0-9a-f]+:\s+(call|jmp|j[a-z]+)q?\s+0x[0-9a-f]+ <([^>]+)>$/\2/p' |
		grep -v -E '@plt|__x86_indirect_thunk|^\.L|^__cfi_' || true
}
# endbr_funcs BIN: names of the functions whose first instruction is endbr64.
endbr_funcs() {
	llvm-objdump-22 -d --no-show-raw-insn "$1" |
		awk '/^[0-9a-f]+ <[^>]+>:$/ { n = $2; gsub(/[<>:]/, "", n); first = 1; next }
		     first && NF { if ($2 == "endbr64") print n; first = 0 }'
}
# at_entry BIN: direct branches that land on an ENDBR at func+0.
at_entry() {
	local b=$1
	grep -Fxf <(endbr_funcs "$b") <(direct_branches "$b") || true
}
thunk_calls() {
	llvm-objdump-22 -d "$1" | grep -c '2e e8 .*<__x86_indirect_thunk_r11>' || true
}

"$FCC" -O2 -o "$D/skip" "$SRC"
"$FCC" -O2 --fineibt-no-skip-endbr -o "$D/noskip" "$SRC"
FINEIBT_CC_SKIP_ENDBR=0 "$FCC" -O2 -o "$D/noskip_env" "$SRC"
clang-22 -O2 -o "$D/plain" "$SRC"
want=$("$D/plain")

T=direct-none-at-entry; WHY="direct branches still land on an ENDBR: $(at_entry "$D/skip" | tr '\n' ' ')"
ok [ -z "$(at_entry "$D/skip")" ]
# d_one, d_two, d_tail from main, d_two from d_tail (jmp), d_rec twice.
n4=$(direct_branches "$D/skip" | grep -c -E '^d_(one|two|tail|rec)\+0x4$' || true)
T=direct-moved; WHY="$n4 direct branches at func+4, want >= 6"
ok [ "$n4" -ge 6 ]
T=direct-tail-jmp; WHY="d_tail's tail jump does not skip d_two's ENDBR"
ok grep -q -E 'jmp\s+0x[0-9a-f]+ <d_two\+0x4>' <<<"$(llvm-objdump-22 -d --no-show-raw-insn --disassemble-symbols=d_tail "$D/skip")"
T=direct-off-switch; WHY="--fineibt-no-skip-endbr moved calls"
ok [ "$(at_entry "$D/noskip" | wc -l)" -ge 6 ]
T=direct-off-env; WHY="FINEIBT_CC_SKIP_ENDBR=0 moved calls"
ok [ "$(at_entry "$D/noskip_env" | wc -l)" -ge 6 ]
T=direct-thunk-calls; WHY="kCFI thunk calls changed ($(thunk_calls "$D/skip") vs $(thunk_calls "$D/noskip"))"
okc '[ "$(thunk_calls "$D/skip")" -ge 3 ] && [ "$(thunk_calls "$D/skip")" = "$(thunk_calls "$D/noskip")" ]'
T=direct-no-relocs; WHY="relocation sections left in the output"
ok [ -z "$(llvm-readelf-22 -S "$D/skip" | grep -E '\.rela\.(text|kcfi_traps|debug)')" ]
T=direct-dyn-relocs; WHY=".rela.dyn lost"
ok grep -q '\.rela\.dyn' <<<"$(llvm-readelf-22 -S "$D/skip")"
T=direct-inspect-same; WHY="fineibt inspect sees other sites than without the pass"
ok cmp -s <("$FIBT" inspect "$D/skip" 2>&1 | sed "s#$D/skip##g") \
	<("$FIBT" inspect "$D/noskip" 2>&1 | sed "s#$D/noskip##g")
T=direct-verbose; WHY="no count with FINEIBT_CC_VERBOSE=1"
ok grep -q -E 'direct branches skip an ENDBR' <<<"$(FINEIBT_CC_VERBOSE=1 "$FCC" -O2 -o "$D/skip_v" "$SRC" 2>&1)"

for m in "${RT_MODES[@]}" fineibt,bhi,warn; do
	rt_run direct-$m "$m" "$D/skip"
	T=direct-run-$m; WHY="rc $RT_RC, '$RT_OUT_TXT' (want '$want'): $RT_ERR_TXT"
	okc '[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "$want" ]'
done

# The checks are where they were: a type-confused call traps.
"$FCC" -O2 -o "$D/calls" "$RT_SRC/rt_calls.c"
for m in $(fi_with_sets kcfi fineibt auto fineibt,paranoid,bhi); do
	rt_run direct-confuse-$m "$m" "$D/calls" confuse call1
	T=direct-confuse-$m; WHY="rc $RT_RC: $RT_ERR_TXT"
	okc '[ "$RT_RC" = 132 ] && grep -q -E "$RT_REPORT_RE" <<<"$RT_ERR_TXT"'
	rt_run direct-legal-$m "$m" "$D/calls" legal
	T=direct-legal-$m; WHY="rc $RT_RC: $RT_OUT_TXT $RT_ERR_TXT"
	okc '[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "legal ok" ]'
done

# A user's own relocations stay true to the code; -s cannot have them.
"$FCC" -O2 -Wl,--emit-relocs -o "$D/userrel" "$SRC"
T=direct-user-emit-relocs; WHY="calls moved or .rela.text dropped under -Wl,--emit-relocs"
okc '[ "$(at_entry "$D/userrel" | wc -l)" -ge 6 ] && grep -q '\''\.rela\.text'\'' <<<"$(llvm-readelf-22 -S "$D/userrel")"'
T=direct-strip-s; WHY="-s link failed or prints a different result"
okc '"$FCC" -O2 -s -o "$D/stripped" "$SRC" && [ "$(FINEIBT_CFI=auto "$D/stripped")" = "$want" ]'
T=direct-strip-wl; WHY="-Wl,--strip-all link failed"
ok "$FCC" -O2 -Wl,-O1,--strip-all -o "$D/stripped2" "$SRC"

# A shared object: its internal calls to an exported function go through
# the PLT (interposable), a hidden one's are direct and move.
cat >"$D/lib.c" <<'C'
__attribute__((visibility("hidden"), noinline)) int lib_h(int x) { return x + 40; }
int (*volatile lib_fp)(int) = lib_h;
int lib_api(int x) { return lib_h(x) + lib_fp(x); }
C
printf 'int lib_api(int);\n#include <stdio.h>\nint main(void){printf("%%d\\n", lib_api(1));return 0;}\n' >"$D/main.c"
"$FCC" -O2 -fPIC -shared -o "$D/libd.so" "$D/lib.c"
"$FCC" -O2 -o "$D/main" "$D/main.c" "$D/libd.so"
T=direct-shared-moved; WHY="lib_api's call of lib_h does not skip its ENDBR"
ok grep -q -E 'call.*<lib_h\+0x4>' <<<"$(llvm-objdump-22 -d --no-show-raw-insn --disassemble-symbols=lib_api "$D/libd.so")"
for m in $(fi_with_sets off kcfi auto fineibt,paranoid,bhi); do
	rt_run direct-shared-$m "$m" env LD_LIBRARY_PATH="$D" "$D/main"
	T=direct-shared-$m; WHY="rc $RT_RC '$RT_OUT_TXT': $RT_ERR_TXT"
	okc '[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = 82 ]'
done

# An objcopy that cannot be started (FINEIBT_CC_OBJCOPY wrong, llvm-22
# half installed): the program is built all the same, exit 0, with the
# pass's one warning naming the tool. It printed "fineibt-cc: error:
# cannot run ..." too, an error line on a build that succeeded.
FINEIBT_CC_OBJCOPY=$D/no-objcopy "$FCC" -O2 -o "$D/noobjcopy" "$SRC" 2>"$D/noobjcopy.err"
rc=$?
T=direct-objcopy-missing
WHY="rc $rc: $(cat "$D/noobjcopy.err")"
okc '[ "$rc" = 0 ] && [ "$(wc -l <"$D/noobjcopy.err")" = 1 ] &&
     grep -q "^fineibt-cc: warning: $D/noobjcopy: direct-call pass: cannot run $D/no-objcopy (No such file or directory)" "$D/noobjcopy.err" &&
     [ "$(FINEIBT_CFI=auto "$D/noobjcopy")" = "$want" ]'
