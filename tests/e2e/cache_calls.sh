#!/usr/bin/env bash
# cache_calls: the fixed system calls of a start (docs/bench.md "Fewer fixed
# system calls": a cache hit or kcfi,norand near a plain process). Hello built by
# fineibt-cc and by plain clang-22, run as nobody under strace -f, its
# entry filled by a `fineibt cached` of the test's own:
#  - hit: the text mapped from the cache; up to main's write, one window
#    (rt_sigprocmask blocking all, then unblocking) for the scan, the
#    mapping, the registration and the PLT pass (two before the pass ran
#    inside it, three before the scan's window stayed open through the
#    mapping); no mprotect makes any page read-write (libc's and ld.so's
#    PLT are written through /proc/self/mem); at most 71 system calls
#    more than plain's to main (99, 93, 90, 76, then 79 once the mapping's
#    check took its 3: readlink, fstat, a kernel query, docs/protection.md
#    "Mapped where the kernel says"; 77 measured, 73 with the PLT pass in
#    the window, 71 with the scan's descriptors closed by one close_range,
#    70 without the SIGILL query of a first start, 69 without the stack
#    scrub's query at a start written in place);
#  - norand: FINEIBT_CFI=kcfi,norand, no cache: one window too, no
#    read-write mprotect either, at most 50 system calls more than plain's
#    (75, 72, 69, 56, then 54 measured before the PLT pass's window went,
#    50 after, 49 without the SIGILL query, 48 without the scrub's);
#  - both: the registered copy goes to the arena's first chunk, inside the
#    state's sealed block (docs/bench.md "The arena's first chunk in the
#    state's block"): two mseal to main in norand (the token's page as
#    the first window opens, the rest of the state's block as it closes;
#    one before the first window wrote in place; a hit seals its entry
#    too), no anonymous PROT_NONE mapping (the chunk's own mapping
#    between guard pages, and its mseal, before);
#  - both: the first window writes the state in place (docs/protection.md
#    "The first window"): at most 3 pwrite to main (the token's probe and
#    the PLT pass's two; 22 and 21 before);
#  - both: the stack scrub still runs (one mincore), its floor not asked
#    of the kernel at a start written in place (docs/protection.md).
# Needs root (the service) and setpriv; skips otherwise.
. "$(dirname "$0")/progs/rt_lib.bash"
. "$(dirname "$0")/progs/cache_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }
cache_setup cache_calls

printf '#include <stdio.h>\nint main(void) { printf("hello, world\\n"); return 0; }\n' >"$T/hello.c"
{ "$FCC" -O2 -o "$T/hello_fi" "$T/hello.c" &&
  clang-22 -O2 -o "$T/hello_plain" "$T/hello.c"; } ||
	{ rt_fail cache-calls-build "cannot build hello"; exit 1; }
chmod 755 "$T"/hello_*

start_svc || { rt_fail cache-calls-service "$(cat "$T/svc.log")"; exit 1; }

# Until a start maps its entry (the first makes the key and asks, the
# service fills).
wait_hit hit 'mapped from the cache' "$T/hello_fi"
[ -n "$hit" ] || { rt_fail cache-calls-hit "no hit: $(cat "$T/hit.err" "$T/svc.log" | tail -5)"; exit 1; }

# trace NAME [VAR=VALUE...] PROG: PROG under strace -f as nobody, with
# the variables (set for strace, which passes them on: no env traced).
trace() {
	local name=$1
	shift
	env "${@:1:$#-1}" strace -f -o "$T/$name.trace" -u nobody "${@: -1}" \
		>"$T/$name.out" 2>/dev/null </dev/null
}

# count TRACE: "calls windows rw seals anon pwrites mincores" up to main's
# write: system calls, windows opened (rt_sigprocmask blocking every
# signal), mprotects asking for write, mseal calls (by name, or by number
# 462 where strace does not know it), anonymous PROT_NONE mappings,
# pwrites, mincore calls (the stack scrub's).
count() {
	python3 - "$1" <<'PY'
import re, sys
calls = windows = rw = seals = anon = pw = mc = 0
for l in open(sys.argv[1]):
    m = re.match(r'(\d+\s+)?(\w+)\((.*)', l)
    if not m:
        continue
    name, args = m.group(2), m.group(3)
    if name == "write" and "hello" in args:
        break
    calls += 1
    if name == "rt_sigprocmask" and args.startswith("SIG_SETMASK, ~["):
        windows += 1
    if name == "mprotect" and "PROT_WRITE" in args:
        rw += 1
    if name in ("mseal", "syscall_0x1ce"):
        seals += 1
    if name == "mmap" and "PROT_NONE" in args and "MAP_ANONYMOUS" in args:
        anon += 1
    if name == "pwrite64":
        pw += 1
    if name == "mincore":
        mc += 1
print(calls, windows, rw, seals, anon, pw, mc)
PY
}

trace plain "$T/hello_plain"
trace hit FINEIBT_CFI=auto FINEIBT_CACHE="$D" "$T/hello_fi"
trace norand FINEIBT_CFI=kcfi,norand FINEIBT_CACHE=off "$T/hello_fi"
# kept for a look after the run ($T goes at exit)
mkdir -p "$RT_OUT/cache_calls"
cp "$T"/*.trace "$RT_OUT/cache_calls/"
read -r pc _ _ _ _ _ _ < <(count "$T/plain.trace")
read -r hc hw hrw _ hanon hpw hmc < <(count "$T/hit.trace")
read -r nc nw nrw nseals nanon npw nmc < <(count "$T/norand.trace")

if [ "$(cat "$T/hit.out")" = "hello, world" ] && [ "$hw" = 1 ] &&
   [ "$hrw" = 0 ] && [ "$hanon" = 0 ] && [ $((hc - pc)) -le 69 ] &&
   [ "$hpw" -le 3 ] && [ "$hmc" = 1 ]; then
	rt_pass "cache-calls-hit: $hc system calls to main ($((hc - pc)) over plain's $pc), $hw windows, $hpw pwrites, no read-write mprotect, no anonymous PROT_NONE mapping, the stack scrub's mincore"
else
	rt_fail cache-calls-hit "out=$(cat "$T/hit.out") calls=$hc plain=$pc (want at most 69 more) windows=$hw (want 1) pwrites=$hpw (want at most 3) mincore=$hmc (want 1: the stack scrub) rw mprotects=$hrw (want 0) anonymous PROT_NONE mappings=$hanon (want 0)"
fi
if [ "$(cat "$T/norand.out")" = "hello, world" ] && [ "$nrw" = 0 ] &&
   [ "$nw" = 1 ] && [ "$nseals" = 2 ] && [ "$nanon" = 0 ] &&
   [ $((nc - pc)) -le 48 ] &&
   [ "$npw" -le 3 ] && [ "$nmc" = 1 ]; then
	rt_pass "cache-calls-norand: $nc system calls to main ($((nc - pc)) over plain's $pc), $nw window, $npw pwrites, no read-write mprotect, two mseal, no anonymous PROT_NONE mapping, the stack scrub's mincore"
else
	rt_fail cache-calls-norand "out=$(cat "$T/norand.out") calls=$nc plain=$pc (want at most 48 more) windows=$nw (want 1) pwrites=$npw (want at most 3) mincore=$nmc (want 1: the stack scrub) rw mprotects=$nrw (want 0) mseals=$nseals (want 2) anonymous PROT_NONE mappings=$nanon (want 0)"
fi
