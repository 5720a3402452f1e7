#!/usr/bin/env bash
# cache_modcalls: what a module served from the shared text cache costs in
# system calls (docs/bench.md "Start-up from the shared text cache",
# docs/runtime.md "Shared text"). A plain executable linked with a
# fineibt-cc library of 3,000 address-taken functions (bench/gen_big.py:
# a text of about 64 pages, a relocation for every function's address),
# run as nobody until its library maps its entry, then under strace:
#  - the pagemap check of the served text (no page of it private yet) is
#    one read, not one per 32 pages (src/load/cacheuse.c, the maps
#    reader's buffer lent to it);
#  - the plain executable is looked at without a readlink of
#    /proc/self/exe (its name is wanted only once it is kCFI);
#  - the same for an executable of those functions built by fineibt-cc
#    (no read of the maps: the scan's own page lent for the entries);
#  - the hit still runs and says so.
# Needs root (the service) and setpriv; skips otherwise.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"
command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }
cache_setup cache_modcalls

python3 "$ROOT/bench/gen_big.py" "$T/gen" 3000 1 >/dev/null &&
printf 'int gen_main(void);\nint main(void) { return gen_main(); }\n' >"$T/caller.c" &&
"$FCC" -O1 -fPIC -shared -Dmain=gen_main -o "$T/libgen.so" \
	"$T/gen/part_00.c" "$T/gen/main.c" &&
clang-22 -O2 -o "$T/main" "$T/caller.c" -L"$T" -lgen -Wl,-rpath,"$T" &&
"$FCC" -O1 -o "$T/genexe" "$T/gen/part_00.c" "$T/gen/main.c" ||
	{ rt_fail cache-modcalls-build "could not build the library and its caller"; exit 1; }
chmod 755 "$T/main" "$T/libgen.so" "$T/genexe"
HIT='libgen.so: mapped from the cache'

start_svc || { rt_fail cache-modcalls-service "$(cat "$T/svc.log")"; exit 1; }

# The first start makes the key and asks for the entry, a later one maps it.
wait_hit fill "$HIT" "$T/main"
[ -n "$hit" ] || { rt_fail cache-modcalls-hit "no hit: $(cat "$T/fill.err" "$T/svc.log" | tail -5)"; exit 1; }

# The hit under strace (-y: each descriptor's path), as nobody, without
# debug (its messages name the executable: a readlink then is theirs).
# The entry's text is mapped: an mmap of a descriptor in nobody's
# directory at the library's text.
FINEIBT_CFI=auto FINEIBT_CACHE=$D strace -f -y -qq -u nobody \
	-e trace=pread64,readlink,readlinkat,mmap -o "$T/hit.trace" "$T/main" \
	>"$T/hit.out" 2>"$T/hit.err"
rc=$?
pm=$(grep -c 'pagemap>' "$T/hit.trace")
rl=$(grep -c 'readlink.*"/proc/self/exe"' "$T/hit.trace")
if [ "$rc" = 0 ] && grep -q "PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED, [0-9]*<$U/[0-9a-f]\{32\}>" "$T/hit.trace" &&
   grep -qx '3000 functions' "$T/hit.out"; then
	rt_pass "cache-modcalls-run: the hit runs"
else
	rt_fail cache-modcalls-run "rc=$rc out='$(cat "$T/hit.out")' err='$(tail -3 "$T/hit.err")' $(grep "$U" "$T/hit.trace" | head -3)"
fi
if [ "$pm" = 1 ]; then
	rt_pass "cache-modcalls-pagemap: one read of the pagemap for the served text"
else
	rt_fail cache-modcalls-pagemap "$pm reads: $(grep pagemap "$T/hit.trace" | head -3)"
fi
if [ "$rl" = 0 ]; then
	rt_pass "cache-modcalls-exe: no readlink of /proc/self/exe for a plain executable"
else
	rt_fail cache-modcalls-exe "$(grep readlink "$T/hit.trace" | head -3)"
fi

# The executable: its hit, then one pagemap read under strace.
wait_hit efill "genexe: mapped from the cache" "$T/genexe"
FINEIBT_CFI=auto FINEIBT_CACHE=$D strace -f -y -qq -u nobody \
	-e trace=pread64,mmap -o "$T/ehit.trace" "$T/genexe" >"$T/ehit.out" 2>"$T/ehit.err"
rc=$?
pm=$(grep -c 'pagemap>' "$T/ehit.trace")
if [ -n "$hit" ] && [ "$rc" = 0 ] && [ "$pm" = 1 ] && grep -qx '3000 functions' "$T/ehit.out" &&
   grep -q "PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED, [0-9]*<$U/[0-9a-f]\{32\}>" "$T/ehit.trace"; then
	rt_pass "cache-modcalls-exe-pagemap: one read of the pagemap for a served executable's text"
else
	rt_fail cache-modcalls-exe-pagemap "hit=$hit rc=$rc reads=$pm $(tail -2 "$T/efill.err")"
fi
