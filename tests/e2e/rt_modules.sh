#!/usr/bin/env bash
# rt_modules: executable + kCFI shared library + dlopen'ed kCFI library,
# all built with fineibt-cc, in every cfi= mode: every module is rewritten
# into the same mode (FINEIBT_VERBOSE lines), calls through pointers
# cross every pair of modules (so the hashes agree: same key), the
# dlopen'ed library's constructor already runs rewritten, and a confused
# call into the dlopen'ed library is caught and symbolised there.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/mods
mkdir -p "$D"
{ rt_build "$D/libfi_rta.so" -O2 -fPIC -shared -Wl,-soname,libfi_rta.so "$RT_SRC/rt_liba.c" &&
  rt_build "$D/libfi_rtb.so" -O2 -fPIC -shared "$RT_SRC/rt_libb.c" -L"$D" -lfi_rta &&
  rt_build "$D/rt_mods" -O2 "$RT_SRC/rt_mods.c" -L"$D" -lfi_rta '-Wl,-rpath,$ORIGIN'; } ||
	{ rt_fail build "fineibt-cc could not build the module programs"; exit 1; }

# &rta_apply (defined with a preamble in libfi_rta.so) needs no veneer;
# &write-style libc functions would.
if llvm-nm-22 "$D/rt_mods" | grep -q ' __wrap_rta_apply$'; then
	rt_fail "modules-no-veneer-for-kcfi-lib" "a veneer was linked for rta_apply"
else
	rt_pass "modules-no-veneer-for-kcfi-lib"
fi

for m in "${RT_MODES[@]}"; do
	# Legal calls, with one line per module rewritten.
	rt_run mods "$m" env FINEIBT_VERBOSE=1 "$D/rt_mods" "$D/libfi_rtb.so"
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "modules ok" ]; then
		rt_pass "modules-calls[$m]"
	else
		rt_fail "modules-calls[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
	n=$(grep -Ec '^fineibt: .*(rt_mods|libfi_rta\.so|libfi_rtb\.so): (rewritten to|kept) ' <<<"$RT_ERR_TXT")
	modes=$(grep -Eo '(rewritten to|kept) [a-z,]+' <<<"$RT_ERR_TXT" | sort -u | wc -l)
	if [ "$n" = 3 ] && [ "$modes" = 1 ]; then
		rt_pass "modules-consistent[$m]: 3 modules, one mode"
	else
		rt_fail "modules-consistent[$m]" "want 3 modules in one mode: $RT_ERR_TXT"
	fi
	# A confused call into the dlopen'ed library.
	rt_run mods-confuse "$m" "$D/rt_mods" "$D/libfi_rtb.so" confuse
	if rt_is_off "$m"; then
		[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = survived ] &&
			{ rt_pass "modules-confuse[$m]: not checked"; continue; }
	elif [ "$RT_RC" = 132 ] &&
	     grep -Eq "${RT_REPORT_RE}twice\\+0x0; .*mode: $(rt_report_mode "$m")\\)" <<<"$RT_ERR_TXT"; then
		rt_pass "modules-confuse[$m]: caught in the dlopen'ed library"
		continue
	fi
	rt_fail "modules-confuse[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
done

# An executable patched statically (fineibt patch, random key in its
# note) with libraries rewritten at load time: the process adopts the
# note's mode and key, so every cross-module call still passes.
"$FIBT" patch "$D/rt_mods" -o "$D/rt_mods_static" --cfi=fineibt,paranoid -q >/dev/null 2>&1 ||
	rt_fail static-patch "fineibt patch failed"
for m in kcfi fineibt,bhi auto; do
	rt_run mods-static "$m" env FINEIBT_VERBOSE=1 "$D/rt_mods_static" "$D/libfi_rtb.so"
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "modules ok" ] &&
	   grep -q 'rt_mods_static: kept static fineibt,paranoid' <<<"$RT_ERR_TXT" &&
	   [ "$(grep -c 'so: rewritten to fineibt,paranoid ' <<<"$RT_ERR_TXT")" = 2 ]; then
		rt_pass "modules-static-exe[$m]: process adopts the note's mode and key"
	else
		rt_fail "modules-static-exe[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
done
