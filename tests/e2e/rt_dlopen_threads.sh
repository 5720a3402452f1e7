#!/usr/bin/env bash
# rt_dlopen_threads: two threads dlopen, call and dlclose a kCFI library
# each (built with fineibt-cc: its crt hook rewrites it inside dlopen),
# 100 rounds, 3 runs per mode. Each thread's rewriting pass meets the
# other's load or unload half done. Found three bugs (src/load/start.c,
# src/interpose/dlsym_so.c): the pass after one thread's dlopen asked dladdr,
# which waits for the loader's lock, while the other thread, holding that
# lock inside dlopen, waited for the pass (both hung, 7 runs in 10); a
# pass bound the dlsym GOT slot of a module still being loaded and left
# its RELRO page read-only under the loader's relocation (SIGSEGV, ~1 run
# in 10); a reload at the address of a module being unloaded passed for
# the rewritten one and stayed in kCFI form (a CFI failure, ~1 run in 40).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/dlthr
mkdir -p "$D"
{ rt_build "$D/libdlthra.so" -O2 -fPIC -shared -DDLTHR_FN=fa "$RT_SRC/dlthr_lib.c" &&
  rt_build "$D/libdlthrb.so" -O2 -fPIC -shared -DDLTHR_FN=fb "$RT_SRC/dlthr_lib.c" &&
  rt_build "$D/dlthr" -O2 -pthread "$RT_SRC/dlthr.c" -ldl; } ||
	{ rt_fail build "fineibt-cc could not build dlthr"; exit 1; }

for m in kcfi fineibt fineibt,paranoid fineibt,bhi auto kcfi,seq=v6.18 auto,seq=v6.18; do
	bad=0 why=
	for i in 1 2 3; do
		# A hang is a failure too (timeout: rc 124).
		rt_run dlthr "$m" timeout 60 "$D/dlthr" "$D/libdlthra.so" "$D/libdlthrb.so" 100
		[ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "dlthr ok" ] && [ -z "$RT_ERR_TXT" ] && continue
		bad=$((bad + 1))
		why="rc=$RT_RC out='$RT_OUT_TXT' err='${RT_ERR_TXT:0:300}'"
	done
	if [ "$bad" = 0 ]; then
		rt_pass "dlopen-threads[$m]: 3 runs of 2x100 loads"
	else
		rt_fail "dlopen-threads[$m]" "$bad of 3 runs failed (last: $why)"
	fi
done
