#!/usr/bin/env bash
# rt_threads: threads making indirect calls while the main thread
# dlopen's, uses and dlclose's a kCFI library 20 times, in every cfi= mode.
# Each dlopen rewrites the new module (its constructor calls back into the
# executable through a pointer) while the other threads keep running.
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/mods
mkdir -p "$D"
{ rt_build "$D/libfi_rta.so" -O2 -fPIC -shared -Wl,-soname,libfi_rta.so "$RT_SRC/rt_liba.c" &&
  rt_build "$D/libfi_rtb.so" -O2 -fPIC -shared "$RT_SRC/rt_libb.c" -L"$D" -lfi_rta &&
  rt_build "$D/rt_threads" -O2 -pthread "$RT_SRC/rt_threads.c" -L"$D" -lfi_rta '-Wl,-rpath,$ORIGIN'; } ||
	{ rt_fail build "fineibt-cc could not build rt_threads"; exit 1; }

for m in "${RT_MODES[@]}"; do
	rt_run threads "$m" env FINEIBT_VERBOSE=1 "$D/rt_threads" "$D/libfi_rtb.so" 20
	# Every one of the 20 loads was rewritten. (kcfi,norand, and auto,norand
	# which is kcfi,norand, rewrite nothing: a reload at the same address
	# is indistinguishable and needs no work, so one "kept" line is all
	# there is.)
	n=$(grep -Ec 'libfi_rtb\.so: (rewritten to|kept) ' <<<"$RT_ERR_TXT")
	want=20
	[ "$(fi_canon "$m")" = kcfi,norand ] && [ "$n" -ge 1 ] && want=$n
	if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "threads ok" ] && [ "$n" = "$want" ] &&
	   ! grep -q 'CFI failure\|warning' <<<"$RT_ERR_TXT"; then
		rt_pass "threads-dlopen[$m]: 20 loads rewritten while 4 threads call"
	else
		rt_fail "threads-dlopen[$m]" "rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
	fi
done
