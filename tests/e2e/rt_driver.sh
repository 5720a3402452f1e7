#!/usr/bin/env bash
# rt_driver: build/fineibt-cc as CC= would use it: --version, -v, -c, -S,
# -E, -M/-MM/-MD, many inputs, separate compile and link, -shared, a
# configure-style probe from stdin, a Makefile build, pointer
# generalisation and its exact-types switch, -static-fineibt, jump tables
# (default, off) and computed goto; and `fineibt run` on kCFI programs built without
# the runtime (preloaded) and with it (not preloaded twice).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/driver
rm -rf "$D"
mkdir -p "$D"
ok() { if "$@"; then rt_pass "$T"; else rt_fail "$T" "${WHY:-check failed}"; fi; }

T=driver-version; WHY="no clang version"
ok grep -q "clang version" <<<"$("$FCC" --version 2>&1)"
T=driver-v-alone; WHY="fineibt-cc -v failed"
ok "$FCC" -v >/dev/null 2>&1

T=driver-c; WHY="no kCFI sections in the object"
"$FCC" -O2 -c "$RT_SRC/rt_calls.c" -o "$D/calls.o"
ok grep -q '__patchable_function_entries' <<<"$(llvm-readelf-22 -S "$D/calls.o" 2>&1)"
T=driver-c-kcfi-traps; WHY="no .kcfi_traps in the object"
ok grep -q '\.kcfi_traps' <<<"$(llvm-readelf-22 -S "$D/calls.o" 2>&1)"
T=driver-S; WHY="assembly has no kcfi_traps section"
"$FCC" -O2 -S "$RT_SRC/rt_calls.c" -o "$D/calls.s"
ok grep -q 'kcfi_traps' "$D/calls.s"
T=driver-E; WHY="preprocessing failed"
ok grep -q 'run_legal' <<<"$("$FCC" -E "$RT_SRC/rt_calls.c" 2>/dev/null)"
T=driver-MM; WHY="no dependency line"
ok grep -q '^rt_calls.o:' <<<"$("$FCC" -MM "$RT_SRC/rt_calls.c" 2>/dev/null)"
T=driver-MD; WHY="no .d file"
"$FCC" -MD -MF "$D/naked.d" -c "$RT_SRC/rt_naked.S" -o "$D/naked.o"
ok grep -q 'rt_naked.S' "$D/naked.d"

# Separate compile then link: the veneer scan reads the objects.
"$FCC" -O2 -c "$RT_SRC/rt_libc.c" -o "$D/libc.o"
"$FCC" "$D/libc.o" -o "$D/libc_sep"
printf 'x\n' >"$D/in"
T=driver-link-objects; WHY="separately compiled program does not run in auto"
ok [ "$(FINEIBT_CFI=auto "$D/libc_sep" "$D/in" 2>&1)" = x ]
T=driver-many-inputs; WHY="source + object + asm link failed"
ok "$FCC" -O2 "$RT_SRC/rt_calls.c" "$D/naked.o" -o "$D/calls_many"
T=driver-many-inputs-run; WHY="linked program fails"
ok [ "$(FINEIBT_CFI=auto "$D/calls_many" legal 2>&1)" = "legal ok" ]

# The runtime by its absolute path (driver/runtime.c): DT_NEEDED names
# $BUILD/libfineibt.so.0, no RUNPATH, and the loader looks in no directory
# for it (no failed open or stat at start-up). FINEIBT_CC_RUNPATH=1: the
# soname and the directory as RUNPATH, as before.
rt_by_path() {	# FILE: NEEDED is the build's runtime by path, no RUNPATH
	local dyn need
	dyn=$(llvm-readelf-22 -d "$1" 2>&1)
	need=$(sed -n 's/.*NEEDED.*\[\(\/.*libfineibt\.so\.0\)\]/\1/p' <<<"$dyn")
	[ -n "$need" ] && [ "$(realpath "$need")" = "$(realpath "$ROOT/$BUILD/libfineibt.so.0")" ] &&
		! grep -qE 'R(UN)?PATH' <<<"$dyn"
}
rt_by_runpath() {	# FILE: NEEDED is the soname, with a RUNPATH
	local dyn
	dyn=$(llvm-readelf-22 -d "$1" 2>&1)
	grep -q 'NEEDED.*\[libfineibt\.so\.0\]' <<<"$dyn" && grep -q RUNPATH <<<"$dyn"
}
T=driver-runtime-path; WHY="want NEEDED $ROOT/$BUILD/libfineibt.so.0 and no RUNPATH"
ok rt_by_path "$D/calls_many"
FINEIBT_CC_RUNPATH=1 "$FCC" -O2 "$RT_SRC/rt_calls.c" "$D/naked.o" -o "$D/calls_rp"
T=driver-runtime-runpath; WHY="FINEIBT_CC_RUNPATH=1: want NEEDED libfineibt.so.0 and a RUNPATH"
ok rt_by_runpath "$D/calls_rp"
if command -v strace >/dev/null && [ -z "${FINEIBT_SAN:-}" ]; then
	FINEIBT_CFI=auto strace -f -qq -e trace=open,openat,stat,newfstatat,access \
		-o "$D/search.trace" "$D/calls_many" legal >/dev/null 2>&1
	T=driver-runtime-no-search; WHY="failed look-ups at start-up: $(grep -- '= -1' "$D/search.trace" | head -5)"
	ok sh -c "! grep -- '= -1' '$D/search.trace' | grep -v /etc/ld.so.preload | grep -q ."
	FINEIBT_CFI=auto strace -f -qq -e trace=open,openat,stat,newfstatat,access \
		-o "$D/search_rp.trace" "$D/calls_rp" legal >/dev/null 2>&1
	T=driver-runtime-runpath-searches; WHY="the RUNPATH link made no failed look-up (is the check blind?)"
	ok grep -q 'libfineibt.so.0.*= -1 ENOENT' "$D/search_rp.trace"
fi

# A configure-style probe: source on stdin with -x c.
T=driver-conftest-stdin; WHY="probe from stdin failed"
ok sh -c "printf 'int main(void){return 0;}\n' | '$FCC' -x c - -o '$D/conftest' && '$D/conftest'"
T=driver-shared-needed; WHY="shared object does not need libfineibt"
"$FCC" -O2 -fPIC -shared "$RT_SRC/rt_liba.c" -o "$D/liba.so"
ok grep -q 'libfineibt.so' <<<"$(llvm-readelf-22 -d "$D/liba.so" 2>&1)"
T=driver-crt-init-first; WHY="crt hook is not the first init_array entry"
ok grep -q 'init_array.00000\|INIT_ARRAY' <<<"$(llvm-readelf-22 -S "$D/liba.so" 2>&1)"

# CC= in a Makefile: compile two files, link them.
cat >"$D/Makefile" <<MK
prog: calls.o naked.o
	\$(CC) -o \$@ calls.o naked.o
calls.o: $RT_SRC/rt_calls.c
	\$(CC) -O2 -c -o \$@ \$<
naked.o: $RT_SRC/rt_naked.S
	\$(CC) -c -o \$@ \$<
MK
T=driver-make; WHY="make CC=fineibt-cc failed"
ok sh -c "cd '$D' && rm -f calls.o naked.o prog && make -s CC='$FCC' >/dev/null 2>&1 && FINEIBT_CFI=fineibt,bhi ./prog legal | grep -q 'legal ok'"

# Pointer generalisation (default) and exact types (switch).
"$FCC" -O2 "$RT_SRC/rt_generalize.c" -o "$D/gen"
FINEIBT_CC_EXACT=1 "$FCC" -O2 "$RT_SRC/rt_generalize.c" -o "$D/gen_exact"
"$FCC" --fineibt-exact -O2 "$RT_SRC/rt_generalize.c" -o "$D/gen_exact2"
for m in $(fi_with_sets kcfi auto); do
	rt_run gen "$m" "$D/gen"
	T="driver-generalize[$m]"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "generalized ok" ]
	for e in gen_exact gen_exact2; do
		rt_run gen-exact "$m" "$D/$e"
		T="driver-exact-types[$e,$m]: cast callback traps"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
		ok [ "$RT_RC" = 132 ]
	done
done

# -static-fineibt: the runtime inside the executable.
"$FCC" -static-fineibt -O2 "$RT_SRC/rt_calls.c" "$RT_SRC/rt_naked.S" -o "$D/calls_static"
T=driver-static-no-needed; WHY="static build still needs libfineibt.so"
ok sh -c "! llvm-readelf-22 -d '$D/calls_static' | grep -q libfineibt"
for m in $(fi_with_sets kcfi fineibt auto fineibt,paranoid,bhi); do
	rt_run static "$m" "$D/calls_static" legal
	T="driver-static-legal[$m]"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "legal ok" ]
	rt_run static-confuse "$m" "$D/calls_static" confuse jmp2
	T="driver-static-confuse[$m]"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}a2\\+0x0" <<<"$RT_ERR_TXT"
done

# Jump tables (the default): switch tables are notrack jmp through a
# read-only table; --fineibt-no-jump-tables / FINEIBT_CC_JUMP_TABLES=0 turn
# them back into compare chains; --fineibt-jump-tables is still accepted.
cat >"$D/sw.c" <<'C'
int f(int x, int y) { switch (x) { case 0: return y + 3; case 1: return y * 7;
case 2: return y - 11; case 3: return y ^ 5; case 4: return y * y; case 5: return 42;
case 6: return y / 3; default: return 0; } }
int (*volatile pf)(int, int) = f;
int main(int c, char **v) { return pf(c, 3); }
C
fdis() { llvm-objdump-22 -d "$1" | sed -n '/<f>:/,/^$/p'; }
"$FCC" -O2 "$D/sw.c" -o "$D/sw"
T=driver-jump-tables-default; WHY="no notrack jmp in f"
ok grep -q 'notrack\|3e ff' <<<"$(fdis "$D/sw")"
T=driver-jump-tables-run; WHY="wrong result"
ok sh -c "FINEIBT_CFI=auto '$D/sw'; [ \$? = 21 ]"
"$FCC" --fineibt-jump-tables -O2 "$D/sw.c" -o "$D/sw_opt"
T=driver-jump-tables-option; WHY="--fineibt-jump-tables: no notrack jmp in f"
ok grep -q 'notrack\|3e ff' <<<"$(fdis "$D/sw_opt")"
"$FCC" --fineibt-no-jump-tables -O2 "$D/sw.c" -o "$D/sw_nojt"
T=driver-no-jump-tables; WHY="--fineibt-no-jump-tables: an indirect jmp in f"
ok sh -c "! llvm-objdump-22 -d '$D/sw_nojt' | sed -n '/<f>:/,/^\$/p' | grep -q 'jmp.*\*'"
T=driver-no-jump-tables-run; WHY="wrong result without jump tables"
ok sh -c "FINEIBT_CFI=auto '$D/sw_nojt'; [ \$? = 21 ]"
FINEIBT_CC_JUMP_TABLES=0 "$FCC" -O2 "$D/sw.c" -o "$D/sw_env0"
T=driver-no-jump-tables-env; WHY="FINEIBT_CC_JUMP_TABLES=0: an indirect jmp in f"
ok sh -c "! llvm-objdump-22 -d '$D/sw_env0' | sed -n '/<f>:/,/^\$/p' | grep -q 'jmp.*\*'"

# Computed goto comes back with jump tables (the same clang feature gates
# both): a tracked jmp through the label table and ENDBRs at the labels.
# It must run in every mode; without jump tables it is a compare chain.
cat >"$D/cgoto.c" <<'C'
static int run(const unsigned char *p, int n)
{
	static const void *const tab[] = { &&l0, &&l1, &&l2, &&l3 };
	int acc = 0;
	goto *tab[*p++ & 3];
l0: acc += 1; if (--n <= 0) return acc; goto *tab[*p++ & 3];
l1: acc ^= 7; if (--n <= 0) return acc; goto *tab[*p++ & 3];
l2: acc *= 3; if (--n <= 0) return acc; goto *tab[*p++ & 3];
l3: acc -= 2; if (--n <= 0) return acc; goto *tab[*p++ & 3];
}
int (*volatile pr)(const unsigned char *, int) = run;
int main(void) { return pr((const unsigned char *)"\0\1\2\3\2\1\0\1", 8); }
C
"$FCC" -O2 "$D/cgoto.c" -o "$D/cgoto"
"$FCC" --fineibt-no-jump-tables -O2 "$D/cgoto.c" -o "$D/cgoto_nojt"
T=driver-cgoto-jmp; WHY="no indirect jmp for the computed goto"
ok grep -q 'jmp.*\*' <<<"$(llvm-objdump-22 -d "$D/cgoto" | sed -n '/<run>:/,/^$/p')"
T=driver-cgoto-nojt; WHY="an indirect jmp without jump tables"
ok sh -c "! llvm-objdump-22 -d '$D/cgoto_nojt' | sed -n '/<run>:/,/^\$/p' | grep -q 'jmp.*\*'"
for m in $(fi_with_sets off kcfi fineibt auto); do
	for b in cgoto cgoto_nojt; do
		T="driver-$b-run[$m]"; WHY="wrong result"
		ok sh -c "FINEIBT_CFI=$m '$D/$b'; [ \$? = 63 ]"
	done
done

# fineibt run: a kCFI program built with plain clang (no runtime).
K="-fsanitize=kcfi -fsanitize-kcfi-arity -fpatchable-function-entry=11,11 -falign-functions=16 -fcf-protection=branch -mretpoline-external-thunk -mindirect-branch-cs-prefix"
# shellcheck disable=SC2086
clang-22 -O2 $K "$RT_SRC/rt_calls.c" "$RT_SRC/rt_naked.S" "$ROOT/crt/thunks.S" -o "$D/plain_kcfi"
for m in $(fi_with_sets kcfi fineibt,paranoid fineibt,bhi auto); do
	rt_run run "" "$FIBT" run --cfi="$m" --verbose -- "$D/plain_kcfi" legal
	T="run-preload-legal[$m]"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "legal ok" ] &&
		grep -q "plain_kcfi: rewritten to" <<<"$RT_ERR_TXT"
	rt_run run-confuse "" "$FIBT" run --cfi="$m" -- "$D/plain_kcfi" confuse call2
	T="run-preload-confuse[$m]"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}a2\\+0x0; .*mode: $(rt_report_mode "$m")\\)" <<<"$RT_ERR_TXT"
done
# A program that links the runtime itself is not given a second one.
rt_run run-own "" "$FIBT" run --cfi=fineibt --verbose -- "$D/calls_many" legal
T="run-no-double-runtime"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
ok [ "$RT_RC" = 0 ] && [ "$(grep -c 'rewritten to' <<<"$RT_ERR_TXT")" = 1 ]
T=run-bad-option; WHY="bad option accepted"
ok sh -c "! '$FIBT' run --bogus -- /bin/true 2>/dev/null"

# fineibt run + a kCFI library built without fineibt-cc and dlopen'ed:
# rewritten by the dlopen interposer once dlopen returns.
# shellcheck disable=SC2086
{ clang-22 -O2 $K -fPIC -shared -Wl,-soname,libfi_rta.so "$RT_SRC/rt_liba.c" "$ROOT/crt/thunks.S" -o "$D/libfi_rta.so" &&
  clang-22 -O2 $K -fPIC -shared "$RT_SRC/rt_libb.c" "$ROOT/crt/thunks.S" -L"$D" -lfi_rta -o "$D/libfi_rtb.so" &&
  clang-22 -O2 $K "$RT_SRC/rt_mods.c" "$ROOT/crt/thunks.S" -L"$D" -lfi_rta '-Wl,-rpath,$ORIGIN' -o "$D/plain_mods"; } ||
	rt_fail run-build "plain kCFI module programs"
for m in $(fi_with_sets kcfi fineibt fineibt,paranoid,bhi auto); do
	rt_run run-mods "" "$FIBT" run --cfi="$m" --verbose -- "$D/plain_mods" "$D/libfi_rtb.so" noctor
	T="run-dlopen-plain[$m]"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "modules ok" ] &&
		[ "$(grep -Ec '(plain_mods|libfi_rta.so|libfi_rtb.so): rewritten to' <<<"$RT_ERR_TXT")" = 3 ]
done

# The same with libfi_rtb's constructor calling back into the rewritten
# executable: the LD_AUDIT library `fineibt run` adds (src/load/audit.c) has the
# runtime rewrite libfi_rtb.so before the constructor runs (with random
# hashes the callback passes only then), and a type-confused call in that
# constructor is caught there in the process's mode.
for m in $(fi_with_sets kcfi fineibt fineibt,paranoid,bhi auto); do
	rt_run run-mods-ctor "" "$FIBT" run --cfi="$m" --verbose -- "$D/plain_mods" "$D/libfi_rtb.so"
	T="run-dlopen-plain-ctor[$m]"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "modules ok" ] &&
		grep -q 'libfi_rtb.so: rewritten to' <<<"$RT_ERR_TXT"
	RTB_CTOR_CONFUSE=1 rt_run run-mods-ctor-confuse "" "$FIBT" run --cfi="$m" -- "$D/plain_mods" "$D/libfi_rtb.so"
	T="run-dlopen-plain-ctor-confuse[$m]"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 132 ] &&
		grep -Eq "CFI failure at (rtb_ctor|__cfi_cb|cb)\+0x[0-9a-f]+ .*mode: $(rt_report_mode "$m")\)" <<<"$RT_ERR_TXT"
done
T=run-sets-audit; WHY="LD_AUDIT not set by fineibt run"
ok sh -c "'$FIBT' run -- /usr/bin/env | grep -q '^LD_AUDIT=.*/libfineibt_audit.so'"

# -static: a fully static executable gets libfineibt.a.
"$FCC" -static -O2 "$RT_SRC/rt_calls.c" "$RT_SRC/rt_naked.S" -o "$D/calls_fullstatic"
for m in $(fi_with_sets fineibt,paranoid,bhi auto); do
	rt_run fullstatic "$m" env FINEIBT_VERBOSE=1 "$D/calls_fullstatic" legal
	T="driver-full-static-legal[$m]"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "legal ok" ] && grep -q 'rewritten to' <<<"$RT_ERR_TXT"
	rt_run fullstatic-confuse "$m" "$D/calls_fullstatic" confuse call1
	T="driver-full-static-confuse[$m]"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
	ok [ "$RT_RC" = 132 ] && grep -Eq "${RT_REPORT_RE}a1\\+0x0" <<<"$RT_ERR_TXT"
done

# -r: a partial link gets no runtime (the final link adds it once).
"$FCC" -O2 -c "$RT_SRC/rt_calls.c" -o "$D/r1.o"
"$FCC" -r "$D/r1.o" "$D/naked.o" -o "$D/partial.o"
T=driver-partial-link; WHY="partial link + final link failed"
ok sh -c "'$FCC' '$D/partial.o' -o '$D/from_partial' && FINEIBT_CFI=auto '$D/from_partial' legal | grep -q 'legal ok'"

# Start-up messages: a compiler without kCFI arity (FINEIBT_CC_ARITY=0
# skips the probe's answer) makes bhi unavailable; unknown words are
# reported and ignored, never fatal.
FINEIBT_CC_ARITY=0 "$FCC" -O2 "$RT_SRC/rt_calls.c" "$RT_SRC/rt_naked.S" -o "$D/calls_noarity"
rt_run noarity fineibt,bhi "$D/calls_noarity" legal
T="runtime-msg-bhi-without-arity"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "legal ok" ] &&
	grep -q "^fineibt: ignoring 'bhi': needs kCFI arity" <<<"$RT_ERR_TXT"
rt_run unknown "bogus,fineibt" "$D/calls_noarity" confuse call2
T="runtime-msg-unknown-word"; WHY="rc=$RT_RC err=$RT_ERR_TXT"
ok [ "$RT_RC" = 132 ] && grep -q "^fineibt: ignoring 'bogus': unknown" <<<"$RT_ERR_TXT" &&
	grep -Eq "${RT_REPORT_RE}a2\\+0x0; .*mode: fineibt\\)" <<<"$RT_ERR_TXT"

# GNU ld instead of lld: --wrap and the veneers work the same.
if [ -x /usr/bin/ld.bfd ]; then
	FINEIBT_CC_LD=/usr/bin/ld.bfd "$FCC" -O2 "$RT_SRC/rt_libc.c" -o "$D/libc_bfd"
	for m in $(fi_with_sets kcfi fineibt fineibt,paranoid,bhi auto); do
		rt_run bfd "$m" "$D/libc_bfd" "$D/in"
		T="driver-gnu-ld-veneers[$m]"; WHY="rc=$RT_RC out=$RT_OUT_TXT err=$RT_ERR_TXT"
		ok [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = x ]
	done
fi
