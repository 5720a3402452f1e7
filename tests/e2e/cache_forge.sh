#!/usr/bin/env bash
# cache_forge (docs/protection.md, "The shared text cache", "Mapped where
# the kernel says"): a dlopen whose library hits the cache, with an
# attacker writing into the scan's scratch while the scan waits (the test
# runtime's park hook: a thread racing it with a write primitive). The
# scan kept the entry's descriptor, the module's identity and its text
# range in heap memory from the lookup to the mapping; the attacker moves
# the range onto libm's text (loaded before, never called). Before: the
# runtime mapped the entry there ("victim replaced by .../u65534/<entry>",
# in every mode: any text of the process, libfineibt's own included, could
# be replaced by pages of an entry). Now the kernel is asked first
# (rtcache.c, fi_cache_map_ok): the library is rewritten privately with
# the reason, libm's text stays libm's, and the library still works.
# The control (no attacker) still maps the entry. Needs root and setpriv
# (the service); skips otherwise.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"
cache_setup cache_forge

{ FINEIBT_CC_RUNPATH=1 "$FCC" -O2 -Wall -o "$T/cache_forge" "$RT_SRC/cache_forge.c" -ldl &&
  "$FCC" -O2 -fPIC -shared -DRT_CACHE_LIB -o "$T/librt_cache.so" "$RT_SRC/rt_cache.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }
chmod 755 "$T"/*
P=$T/cache_forge
L=$T/librt_cache.so
TESTLIB=$ROOT/$BUILD/testlib
HIT='librt_cache.so: mapped from the cache'

start_svc || { rt_fail cache-forge-service "$(cat "$T/svc.log")"; exit 1; }

for m in auto kcfi fineibt fineibt,paranoid; do
	# The entries of this mode filled, then a hit without the attacker.
	hit=
	for _ in $(seq 40); do
		FINEIBT_CFI=$m,debug FINEIBT_CACHE=$D LD_LIBRARY_PATH=$TESTLIB \
			"${NOBODY[@]}" "$P" none "$L" >"$T/none.out" 2>"$T/none.err"
		grep -q "$HIT" "$T/none.err" && { hit=1; break; }
		sleep 0.1
	done
	if [ -n "$hit" ] && [ "$(cat "$T/none.out")" = "victim kept" ]; then
		rt_pass "cache-forge-control[$m]: the library mapped from its entry"
	else
		rt_fail "cache-forge-control[$m]" "out='$(cat "$T/none.out")' err='$(head -c 300 "$T/none.err")'"
		continue
	fi
	FINEIBT_CFI=$m,debug FINEIBT_CACHE=$D LD_LIBRARY_PATH=$TESTLIB \
		"${NOBODY[@]}" "$P" "$L" >"$T/forge.out" 2>"$T/forge.err"
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/forge.out")" = $'forged\nvictim kept' ] &&
	   grep -q 'librt_cache.so: the range to map over is not this module.s text; rewritten privately' "$T/forge.err" &&
	   ! grep -q "$HIT" "$T/forge.err"; then
		rt_pass "cache-forge[$m]: the moved range refused; libm's text kept, the library rewritten privately"
	else
		rt_fail "cache-forge[$m]" "rc=$rc out='$(cat "$T/forge.out")' err='$(head -c 400 "$T/forge.err")'"
	fi
done
