#!/usr/bin/env bash
# rt_windows: the runtime state's write windows are few (issue 12,
# docs/protection.md "Write windows"). Each window opens (mprotect
# read-write) part of the state and closes by making the whole state
# read-only again: one mprotect(STATE, size, PROT_READ) per window. Under
# strace, in every cfi= mode, with the state's address taken from the
# runtime's anchor (memfd "fineibt-rt:ADDR:..."), the windows of each phase
# of tests/e2e/progs/rt_windows.c are counted and must not exceed:
#   start-up (to main)                 2: record + mode; register + seal
#                                        (+1 after an early start: libc's
#                                        dlopen, resolved by dlhook.c's
#                                        constructor; +1 in bhi modes: the
#                                        stubs near the executable)
#   dlopen of a kCFI library            2: record; register (+1 bhi)
#   dlopen of it again                  0
#   dlopen of an uninstrumented library 1: its record
# Every window must also close (as many whole-state read-only closes as
# windows that opened pages), and a window opens only the pages it writes:
# after start-up at most 2 here (the page of the small fields, and the
# module table's when a module is registered), 3 in bhi modes (the stub
# table), never the whole state; start-up's windows open the sealed page
# too (page 0: mode, key, code pointers; closed to later windows,
# docs/protection.md "The sealed page"): one more.
# No mprotect may repeat the one before it in its thread (same range and
# protection, no mapping change between): a system call for nothing, as
# closing an arena chunk opened from its first page used to make.
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/windows
mkdir -p "$D"
{ rt_build "$D/rt_windows" -O2 "$RT_SRC/rt_windows.c" -ldl &&
  rt_build "$D/rt_windows_early" -O2 -DRT_WINDOWS_PREINIT "$RT_SRC/rt_windows.c" -ldl &&
  rt_build "$D/librt_wlib.so" -O1 -fPIC -shared "$RT_SRC/rt_lazylib.c"; } ||
	{ rt_fail build "fineibt-cc could not build the programs"; exit 1; }
OTHER=$(ldconfig -p | awk '/libm\.so\.6 .*x86-64/ { print $NF; exit }')
[ -n "$OTHER" ] || OTHER=libm.so.6

# count TRACE: prints "start dlopen1 dlopen2 dlopen3 opens closes pages"
# (windows per phase; read-write opens and read-only closes of the state;
# the most pages one window opened, at start-up and after).
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
# A window ends with the whole state made read-only: the largest
# mprotect(ADDR, SIZE, PROT_READ) of the trace.
size = 0
for l in lines:
    m = re.search(r'mprotect\(0x([0-9a-f]+), (\d+), PROT_READ\) = 0', l)
    if m and int(m.group(1), 16) == addr:
        size = max(size, int(m.group(2)))
phase, win = 0, [0, 0, 0, 0]
opens = closes = cur = 0
pages = [0, 0]	# the most pages one window opened: start-up, after
for l in lines:
    m = re.search(r'write\(-1, "(main|dlopen[123])"', l)
    if m:
        phase = {"main": 1, "dlopen1": 2, "dlopen2": 3, "dlopen3": 4}[m.group(1)]
        continue
    m = re.search(r'mprotect\(0x([0-9a-f]+), (\d+), ([A-Z_|]+)\) = 0', l)
    if not m:
        continue
    a, n, prot = int(m.group(1), 16), int(m.group(2)), m.group(3)
    if a < addr or a >= addr + size:
        continue
    if prot == "PROT_READ|PROT_WRITE":
        opens += 1
        cur += n // 4096
    elif prot == "PROT_READ" and a == addr and n == size:
        closes += 1
        pages[phase > 0] = max(pages[phase > 0], cur)
        cur = 0
        win[min(phase, 3)] += 1
print(" ".join(str(x) for x in win), opens, closes, pages[0], pages[1])
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

check() {
	local tag=$1 exe=$2 early=$3 trace=$D/$1.trace got rep bhi=0
	{ FINEIBT_CFI=$m strace -f -qq -e trace=mprotect,memfd_create,write,mmap,munmap,mremap \
		-o "$trace" "$exe" "$D/librt_wlib.so" "$OTHER" \
		>"$D/$tag.out" 2>"$D/$tag.err" </dev/null; RT_RC=$?; } 2>/dev/null
	got=$(count "$trace")
	rep=$(repeats "$trace")
	read -r s d1 d2 d3 o c p0 p <<<"$got"
	[[ $(rt_base "$m") == *bhi* ]] && bhi=1
	if [ "$RT_RC" != 0 ] || [ "$(cat "$D/$tag.out")" != "windows ok 4" ]; then
		rt_fail "$tag" "program failed: rc=$RT_RC $(cat "$D/$tag.out" "$D/$tag.err")"
	elif [ "$s" = noanchor ]; then
		rt_fail "$tag" "no runtime anchor in the trace (strace broken?)"
	elif [ "$s" -gt $((2 + early + bhi)) ] || [ "$s" -lt 1 ]; then
		rt_fail "$tag" "start-up opened $s windows (want 1..$((2 + early + bhi))): $got"
	elif [ "$d1" -gt $((2 + bhi)) ] || [ "$d1" -lt 1 ]; then
		rt_fail "$tag" "dlopen of a kCFI library opened $d1 windows (want 1..$((2 + bhi))): $got"
	elif [ "$d2" != 0 ]; then
		rt_fail "$tag" "a dlopen of a loaded library opened $d2 windows: $got"
	elif [ "$d3" != 1 ]; then
		rt_fail "$tag" "a dlopen of an uninstrumented library opened $d3 windows (want 1): $got"
	elif [ "$o" -lt "$c" ]; then
		rt_fail "$tag" "$c closes for $o opens: $got"
	elif [ "$rep" != none ]; then
		rt_fail "$tag" "an mprotect repeats the one before it: $rep"
	elif [ "$p0" -gt $((3 + bhi)) ]; then
		rt_fail "$tag" "a start-up window opened $p0 pages (want at most $((3 + bhi))): $got"
	elif [ "$p" -gt $((2 + bhi)) ]; then
		rt_fail "$tag" "a window after start-up opened $p pages (want at most $((2 + bhi))): $got"
	else
		rt_pass "$tag: windows start $s, dlopen $d1/$d2/$d3; at most $p0 pages per start-up window, $p after"
	fi
}

for m in "${RT_MODES[@]}"; do
	check "windows[$m]" "$D/rt_windows" 0
	check "windows-early[$m]" "$D/rt_windows_early" 1
done
