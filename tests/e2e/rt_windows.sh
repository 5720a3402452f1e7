#!/usr/bin/env bash
# rt_windows: the runtime state is never made writable, is read-only from
# the end of start-up's first window on, and its windows are few
# (docs/protection.md, "Writing the state through the kernel" and "The
# first window"). Under strace, in every cfi= mode, with the state's
# address taken from the runtime's anchor (memfd "fineibt-rt:ADDR:..."):
#   - no mprotect ever makes a page of the state (or its owner token)
#     writable; the state is made read-only once, inside a window that
#     closes before main (the first; or start-up's registration window
#     when start-up writes it in place: the loader's .bss until then),
#     and sealed (mseal);
#   - every write to it is a pwrite on the /proc/self/mem descriptor the
#     runtime opened; a window is one fstat of that descriptor (the first
#     one opens it; not the PLT pass's, right after its unshare(CLONE_VM):
#     it writes PLT entries, not the state, and takes no lock), counted
#     per phase of tests/e2e/progs/rt_windows.c:
#       start-up (to main)                 2: record + mode; register + seal
#                                            (+1 after an early start: libc's
#                                            dlopen, resolved by dlhook.c's
#                                            constructor; +1 in bhi modes: the
#                                            stubs near the executable)
#       dlopen of a kCFI library            2: record; register (+1 bhi)
#       dlopen of it again                  0
#       dlopen of an uninstrumented library 1: its record
#     (+1 after a dlopen whose PLT pass copied a PLT page, libc's or the
#     library's: the copy's file and offset recorded, fi_rt_copy_note)
#     and the puts of the last two phases: none, and at most 5 (the
#     record, its count; a PLT copy's record and the count of those);
#   - no mprotect repeats the one before it in its thread (same range and
#     protection, no mapping change between).
# windows-fallback: the same program where /proc/self/mem cannot be had
# (the test build's FINEIBT_TEST_NOPROCMEM=1): every page a window makes
# read-write is made read-only again before the next phase, a window opens
# at most 2 pages after start-up (3 in bhi modes), and the same window
# counts hold (each fallback window closes the state with one whole-state
# mprotect read-only).
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/windows
mkdir -p "$D"
# Named by soname (FINEIBT_CC_RUNPATH=1): the fallback cases run them
# against the test library (its FINEIBT_TEST_NOPROCMEM hook).
export FINEIBT_CC_RUNPATH=1
{ rt_build "$D/rt_windows" -O2 "$RT_SRC/rt_windows.c" -ldl &&
  rt_build "$D/rt_windows_early" -O2 -DRT_WINDOWS_PREINIT "$RT_SRC/rt_windows.c" -ldl &&
  rt_build "$D/librt_wlib.so" -O1 -fPIC -shared "$RT_SRC/rt_lazylib.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }
unset FINEIBT_CC_RUNPATH
OTHER=$(ldconfig -p | awk '/libm\.so\.6 .*x86-64/ { print $NF; exit }')
[ -n "$OTHER" ] || OTHER=libm.so.6

# count TRACE: prints "start dlopen1 dlopen2 dlopen3 put2 put3 writable
# sealed opens closes pages" (windows per phase; puts in the last two
# phases; state mprotects that made it writable; whether it was sealed;
# for the fallback: read-write opens and whole-state read-only closes of
# the state and the most pages one window opened after start-up).
count() {
	python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
addr = None
for l in lines:
    m = re.search(r'memfd_create\("fineibt-rt:([0-9a-f]+):', l)
    if m:
        addr = int(m.group(1), 16)
if addr is None:
    print("noanchor"); sys.exit(0)
# The state's size: its first read-only mprotect (the state and its token;
# the fallback's first window close), else the first read-only mprotect
# covering it (the block from its lower guard: from the state on). Where
# that one is: inside a window (after a rt_sigprocmask blocking every
# signal, before the one unblocking) that closes before main: the first,
# or, written in place across a rewrite, start-up's registration window.
size = 0
for l in lines:
    m = re.search(r'mprotect\(0x([0-9a-f]+), (\d+), PROT_READ\) = 0', l)
    if m and int(m.group(1), 16) == addr:
        size = int(m.group(2)); break
ro_at = close = main_at = None
in_win = False
for i, l in enumerate(lines):
    m = re.search(r'mprotect\(0x([0-9a-f]+), (\d+), PROT_READ\) = 0', l)
    if m and ro_at is None and \
       int(m.group(1), 16) <= addr < int(m.group(1), 16) + int(m.group(2)):
        ro_at = i if in_win else -1
        if not size:
            size = int(m.group(1), 16) + int(m.group(2)) - addr
    if re.search(r'rt_sigprocmask\(SIG_SETMASK, ~\[', l):
        in_win = True
    if re.search(r'rt_sigprocmask\(SIG_SETMASK, \[', l):
        in_win = False
        if ro_at is not None and close is None:
            close = i
    if main_at is None and re.search(r'write\(-1, "main"', l):
        main_at = i
late = int(ro_at is None or ro_at < 0 or close is None or main_at is None or
           close > main_at)
memfd = None
opened = unshared = False
phase, win, puts = 0, [0, 0, 0, 0], [0, 0, 0, 0]
writable = sealed = opens = closes = cur = page_max = 0
whole = None
for l in lines:
    m = re.search(r'write\(-1, "(main|dlopen[123])"', l)
    if m:
        phase = {"main": 1, "dlopen1": 2, "dlopen2": 3, "dlopen3": 4}[m.group(1)]
        continue
    m = re.search(r'open(at)?\((AT_FDCWD, )?"/proc/self/mem", .*\) = (\d+)', l)
    if m:
        memfd = m.group(3)
        win[min(phase, 3)] += 1
        opened = True	# its own fstat follows: the same window
        continue
    # The PLT pass asks the descriptor once, alone (after its
    # unshare(CLONE_VM)), to write PLT entries: no window, no lock.
    if re.search(r'\bunshare\(CLONE_VM\)', l):
        unshared = True
        continue
    if memfd and re.search(r'\bfstat\(%s,' % memfd, l):
        if not opened and not unshared:
            win[min(phase, 3)] += 1
        opened = unshared = False
        continue
    unshared = False
    if memfd and re.search(r'pwrite64\(%s,' % memfd, l):
        puts[min(phase, 3)] += 1
        continue
    m = re.search(r'(mseal|syscall_0x1ce)\(0x([0-9a-f]+), (0x[0-9a-f]+|\d+)', l)
    if m and int(m.group(2), 16) < addr + size and \
       int(m.group(2), 16) + int(m.group(3), 0) > addr:
        sealed = 1
        continue
    m = re.search(r'mprotect\(0x([0-9a-f]+), (\d+), ([A-Z_|]+)\) = 0', l)
    if not m or not size:
        continue
    a, n, prot = int(m.group(1), 16), int(m.group(2)), m.group(3)
    if a + n <= addr or a >= addr + size:
        continue
    if "PROT_WRITE" in prot:
        writable += 1
        opens += 1
        cur += n // 4096
    elif prot == "PROT_READ" and a == addr:
        if whole is None:
            whole = n            # the first: the state made read-only
            continue
        closes += 1
        if phase > 0:
            page_max = max(page_max, cur)
        cur = 0
        win[min(phase, 3)] += 1
print(" ".join(str(x) for x in win), puts[2], puts[3], writable, sealed,
      opens, closes, page_max, late)
PY
}

# repeats TRACE: the first mprotect that only repeats the one before it in
# the same thread (same range, same protection, no mapping change between:
# a system call that changes nothing), or "none".
repeats() {
	python3 - "$1" <<'PY'
import re, sys
last = {}
for l in open(sys.argv[1]).read().splitlines():
    m = re.match(r'(\d+)\s+(\w+)\((.*)\) += ', l)
    if not m:
        continue
    pid, call, args = m.groups()
    if call == "mprotect" and last.get(pid) == args:
        print(l.replace(" ", "_")); sys.exit(0)
    if call in ("mprotect", "mmap", "munmap", "mremap"):
        last[pid] = args if call == "mprotect" else None
print("none")
PY
}

# check TAG EXE EARLY [fallback]
check() {
	local tag=$1 exe=$2 early=$3 fb=${4:-} trace=$D/$1.trace got rep bhi=0
	local env=()
	[ -n "$fb" ] && env=(LD_LIBRARY_PATH="$ROOT/$BUILD/testlib" FINEIBT_TEST_NOPROCMEM=1)
	# Every system call: strace 6.1 cannot name mseal in a filter (it
	# prints it as syscall_0x1ce).
	{ env "${env[@]}" FINEIBT_CFI=$m strace -f -qq \
		-o "$trace" "$exe" "$D/librt_wlib.so" "$OTHER" \
		>"$D/$tag.out" 2>"$D/$tag.err" </dev/null; RT_RC=$?; } 2>/dev/null
	got=$(count "$trace")
	rep=$(repeats "$trace")
	read -r s d1 d2 d3 p2 p3 w sealed o c p late <<<"$got"
	[[ $(rt_base "$m") == *bhi* ]] && bhi=1
	if [ "$RT_RC" != 0 ] || [ "$(cat "$D/$tag.out")" != "windows ok 4" ]; then
		rt_fail "$tag" "program failed: rc=$RT_RC $(cat "$D/$tag.out" "$D/$tag.err")"
	elif [ "$s" = noanchor ]; then
		rt_fail "$tag" "no runtime anchor in the trace (strace broken?)"
	elif [ -z "$fb" ] && [ "$w" != 0 ]; then
		rt_fail "$tag" "an mprotect made the state writable $w times: $got"
	elif [ -z "$fb" ] && [ "$sealed" != 1 ]; then
		rt_fail "$tag" "the state was not sealed: $got"
	elif [ "$late" != 0 ]; then
		rt_fail "$tag" "the state was not read-only from a window closing before main: $got"
	elif [ "$s" -gt $((2 + early + bhi)) ] || [ "$s" -lt 1 ]; then
		rt_fail "$tag" "start-up opened $s windows (want 1..$((2 + early + bhi))): $got"
	elif [ "$d1" -gt $((3 + bhi)) ] || [ "$d1" -lt 1 ]; then
		rt_fail "$tag" "dlopen of a kCFI library opened $d1 windows (want 1..$((3 + bhi))): $got"
	elif [ "$d2" != 0 ]; then
		rt_fail "$tag" "a dlopen of a loaded library opened $d2 windows: $got"
	elif [ "$d3" -lt 1 ] || [ "$d3" -gt 2 ]; then
		rt_fail "$tag" "a dlopen of an uninstrumented library opened $d3 windows (want 1..2): $got"
	elif [ -z "$fb" ] && { [ "$p2" != 0 ] || [ "$p3" -lt 1 ] || [ "$p3" -gt 5 ]; }; then
		rt_fail "$tag" "puts: $p2 for a loaded library (want 0), $p3 for an uninstrumented one (want 1..5): $got"
	elif [ -n "$fb" ] && [ "$o" -lt 1 ]; then
		rt_fail "$tag" "the fallback opened no window: $got"
	elif [ -n "$fb" ] && [ "$p" -gt $((2 + bhi)) ]; then
		rt_fail "$tag" "a fallback window after start-up opened $p pages (want at most $((2 + bhi))): $got"
	elif [ "$rep" != none ]; then
		rt_fail "$tag" "an mprotect repeats the one before it: $rep"
	elif [ -n "$fb" ]; then
		rt_pass "$tag: windows start $s, dlopen $d1/$d2/$d3; $o opens, $c closes, at most $p pages a window after start-up"
	else
		rt_pass "$tag: never made writable, read-only from a start-up window's end, sealed; windows start $s, dlopen $d1/$d2/$d3; puts $p2/$p3"
	fi
}

for m in "${RT_MODES[@]}"; do
	check "windows[$m]" "$D/rt_windows" 0
	check "windows-early[$m]" "$D/rt_windows_early" 1
done
for m in kcfi fineibt,paranoid,bhi auto; do
	check "windows-fallback[$m]" "$D/rt_windows" 0 fallback
done
