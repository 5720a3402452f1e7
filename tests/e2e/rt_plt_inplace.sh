#!/usr/bin/env bash
# rt_plt_inplace: the PLT pass (src/interpose/plt.c) rewrites libc's and
# ld.so's PLT pages where they are when the process is alone (start-up),
# and by a sealed copy moved with mremap when another task runs (issue
# 12: the copy cost two mappings, a move and an unmap a module). Alone,
# the entries are written through the runtime's /proc/self/mem descriptor
# (one pwrite a run of entries: the mprotect, madvise, mprotect of each
# module cost six system calls a start; docs/bench.md "Fewer fixed system
# calls"). Under strace -f, in
# several cfi= modes:
#   nomove:  hello's start-up makes no mremap, and writes libc's PLT with
#            pwrite64 into its text: one write for libc, one for ld.so;
#   norw:    no mprotect ever makes a page of libc's text writable, and
#            none anywhere asks for write and execute;
#   direct:  FINEIBT_VERBOSE still says libc's and ld.so's PLT entries
#            were made direct;
#   fallback: where /proc/self/mem cannot be had (the test build's
#            FINEIBT_TEST_NOPROCMEM=1), every mprotect that makes a page
#            of libc's text read-write is followed by the same range made
#            read-execute, with no system call between them but the
#            copy-on-write of that same range (MADV_POPULATE_WRITE), and
#            the entries are made direct;
#   many:    with 18 partial-RELRO libraries loaded (more executable
#            segments than the pass keeps on its stack: it counts them and
#            takes them all from the heap), under LD_BIND_NOW, every
#            library's PLT entry and libc's are made direct: their targets
#            (in libc, past the 16th segment) were among the ranges checked;
#   thread:  a dlopen of libz (RTLD_NOW) with another thread running still
#            takes the copy (an mremap of the copy), never the in-place
#            write, and libz's entries are made direct;
#   alone:   the same dlopen with no other thread takes the copy too:
#            after start-up an io_uring completion of the program can
#            write the text or the list of fixes between their check and
#            their store, alone or not (rtlive.h, fi_live_unverified_ok;
#            protect_uring.sh). Before, it wrote libz's PLT in place.
. "$(dirname "$0")/progs/rt_lib.bash"

command -v strace >/dev/null || { echo "SKIP: strace not installed"; exit 0; }

D=$RT_OUT/plt_inplace
mkdir -p "$D"
# Named by soname (FINEIBT_CC_RUNPATH=1): the fallback runs it against the
# test library (its FINEIBT_TEST_NOPROCMEM hook).
FINEIBT_CC_RUNPATH=1 rt_build "$D/rt_plt_inplace" -O2 "$RT_SRC/rt_plt_inplace.c" -ldl -lpthread ||
	{ rt_fail build "fineibt-cc could not build rt_plt_inplace"; exit 1; }

# check TRACE PHASE [LIB [LO HI]]: prints "mremaps windows bad wx pw" for
# the text windows of LIB (a regex of its file name, default libc's; or
# its executable range in hex, for ld.so) in the trace (PHASE start: up to
# main's write; all: everything); pw: pwrite64 calls through the
# /proc/self/mem descriptor into that text.
check() {
	python3 - "$1" "$2" "${3:-libc\.so\.6}" "${4:-}" "${5:-}" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
phase = sys.argv[2]
# the library's executable mapping: the PROT_EXEC mmap of the fd its file
# was opened on.
fd = None; lo = hi = None
for l in lines:
    m = re.search(r'openat\(.*"[^"]*/' + sys.argv[3] + r'", [^)]*\) = (\d+)', l)
    if m:
        fd = m.group(1)
    m = re.search(r'mmap\(0x([0-9a-f]+), (\d+), PROT_READ\|PROT_EXEC, [^,]*, (\d+),', l)
    if m and fd and m.group(3) == fd and lo is None:
        lo = int(m.group(1), 16); hi = lo + int(m.group(2))
if sys.argv[4]:
    lo, hi = int(sys.argv[4], 16), int(sys.argv[5], 16)
calls = []
for l in lines:
    m = re.match(r'(\d+)\s+(\w+)\((.*)', l)
    if not m:
        continue
    if phase == "start" and m.group(2) == "write" and "hello" in l:
        break
    calls.append((m.group(1), m.group(2), m.group(3)))
mremaps = sum(1 for c in calls if c[1] == "mremap")
# writes through the runtime's /proc/self/mem descriptor into the text
mem = set()
for pid, name, args in calls:
    m = re.match(r'(AT_FDCWD, )?"/proc/self/mem", .*\) = (\d+)', args)
    if name in ("open", "openat") and m:
        mem.add(m.group(2))
pw = 0
for pid, name, args in calls:
    m = re.match(r'(\d+), .*, (\d+)\) += \d+', args)
    if name == "pwrite64" and m and m.group(1) in mem and lo is not None and \
       lo <= int(m.group(2)) < hi:
        pw += 1
wx = sum(1 for c in calls if c[1] == "mprotect" and "PROT_WRITE" in c[2] and "PROT_EXEC" in c[2])
windows = bad = 0
for i, (pid, name, args) in enumerate(calls):
    m = re.match(r'0x([0-9a-f]+), (\d+), PROT_READ\|PROT_WRITE\)', args)
    if name != "mprotect" or not m or lo is None:
        continue
    a = int(m.group(1), 16)
    if not (lo <= a < hi):
        continue
    windows += 1
    # the copy-on-write of the same range in one call (MADV_POPULATE_WRITE)
    # may come between: a system call made inline, no code of the pages
    nxt = [c for c in calls[i + 1:] if c[0] == pid and not
           (c[1] == "madvise" and c[2].startswith("0x%x, %s, MADV_POPULATE_WRITE)" % (a, m.group(2))))][:1]
    if not nxt or nxt[0][1] != "mprotect" or \
       not nxt[0][2].startswith("0x%x, %s, PROT_READ|PROT_EXEC)" % (a, m.group(2))):
        bad += 1
print(mremaps, windows, bad, wx, pw, "nolibc" if lo is None else "")
PY
}

# The runtime's library (not the test one): FINEIBT_CC_RUNPATH left the
# program naming it by soname.
LIBDIR=$ROOT/$BUILD
for m in auto kcfi fineibt,bhi off; do
	t=$D/hello.$m.trace
	LD_LIBRARY_PATH=$LIBDIR FINEIBT_CFI=$m FINEIBT_VERBOSE=1 strace -f -o "$t" \
		"$D/rt_plt_inplace" >"$D/hello.$m.out" 2>"$D/hello.$m.err"
	rc=$?
	read -r mremaps windows bad wx pw extra < <(check "$t" start)
	read -r _ ldlo ldhi < <(grep '^ldso ' "$D/hello.$m.out")
	read -r _ _ _ _ pwld _ < <(check "$t" start ld-linux "${ldlo:-0}" "${ldhi:-0}")
	if [ "$rc" = 0 ] && [ -z "${extra:-}" ] && [ "$mremaps" = 0 ] &&
	   [ "$pw" = 1 ] && [ "$pwld" = 1 ]; then
		rt_pass "plt_inplace_nomove[$m]: no mremap at start-up, one pwrite into libc's text, one into ld.so's"
	else
		rt_fail "plt_inplace_nomove[$m]" "rc=$rc mremaps=$mremaps pwrites libc=$pw ld.so=$pwld ${extra:-}"
	fi
	if [ "$windows" = 0 ] && [ "$wx" = 0 ]; then
		rt_pass "plt_inplace_norw[$m]: libc's text never made writable; never W+X"
	else
		rt_fail "plt_inplace_norw[$m]" "libc read-write windows=$windows write+exec=$wx"
	fi
	if grep -q 'libc\.so\.6: [0-9]* PLT entries made direct' "$D/hello.$m.err" &&
	   grep -q 'ld-linux[^:]*: [0-9]* PLT entries made direct' "$D/hello.$m.err"; then
		rt_pass "plt_inplace_direct[$m]: libc's and ld.so's PLT entries made direct"
	else
		rt_fail "plt_inplace_direct[$m]" "$(grep 'PLT' "$D/hello.$m.err" | head -3)"
	fi
done

# fallback: no /proc/self/mem (the test library's hook): the mprotect
# window, closed at once.
for m in auto kcfi; do
	t=$D/fallback.$m.trace
	LD_LIBRARY_PATH=$LIBDIR/testlib FINEIBT_TEST_NOPROCMEM=1 FINEIBT_CFI=$m \
		FINEIBT_VERBOSE=1 strace -f -o "$t" "$D/rt_plt_inplace" \
		>"$D/fallback.$m.out" 2>"$D/fallback.$m.err"
	rc=$?
	read -r mremaps windows bad wx pw extra < <(check "$t" start)
	if [ "$rc" = 0 ] && [ -z "${extra:-}" ] && [ "$mremaps" = 0 ] &&
	   [ "$windows" -ge 1 ] && [ "$bad" = 0 ] && [ "$wx" = 0 ] && [ "$pw" = 0 ] &&
	   grep -q 'libc\.so\.6: [0-9]* PLT entries made direct' "$D/fallback.$m.err"; then
		rt_pass "plt_inplace_fallback[$m]: without /proc/self/mem, $windows read-write window(s) on libc, closed at once"
	else
		rt_fail "plt_inplace_fallback[$m]" "rc=$rc mremaps=$mremaps windows=$windows not closed at once=$bad write+exec=$wx pwrites=$pw ${extra:-}"
	fi
done

# many: one PLT entry each (puts) in 18 libraries linked lazily without
# RELRO, all needed by the program.
M=$D/many
mkdir -p "$M"
libs=()
main='#include <stdio.h>'
calls=
for i in $(seq 1 18); do
	printf '#include <stdio.h>\nvoid many%d(void) { puts("%d"); }\n' "$i" "$i" >"$M/m$i.c"
	clang-22 -O1 -fPIC -shared -Wl,-z,lazy -Wl,-z,norelro -o "$M/libm$i.so" "$M/m$i.c" ||
		{ rt_fail plt_inplace_many "cannot build libm$i.so"; exit 1; }
	libs+=("-lm$i")
	main="$main
void many$i(void);"
	calls="$calls many$i();"
done
printf '%s\nint main(void) {%s return 0; }\n' "$main" "$calls" >"$M/main.c"
rt_build "$M/many" -O1 "$M/main.c" -L"$M" -Wl,-rpath,"$M" "${libs[@]}" ||
	{ rt_fail plt_inplace_many "fineibt-cc could not build the program"; exit 1; }
LD_BIND_NOW=1 FINEIBT_CFI=kcfi FINEIBT_VERBOSE=1 "$M/many" >"$M/out" 2>"$M/err"
rc=$?
made=$(grep -c 'libm[0-9]*\.so: 1 PLT entries made direct' "$M/err")
if [ "$rc" = 0 ] && [ "$(wc -l <"$M/out")" = 18 ] && [ "$made" = 18 ] &&
   grep -q 'libc\.so\.6: [0-9]* PLT entries made direct' "$M/err" &&
   ! grep -q 'still read' "$M/err"; then
	rt_pass "plt_inplace_many: 18 lazy libraries and libc, every PLT entry made direct"
else
	rt_fail plt_inplace_many "rc=$rc made=$made/18 $(grep -m2 'PLT' "$M/err")"
fi

LIBZ=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
if [ -z "$LIBZ" ]; then
	echo "SKIP: plt_inplace_thread (no libz.so.1)"
	exit 0
fi
# by_copy HOW WHAT MODE...: the program's dlopen of libz (HOW: with a
# thread, or alone after start-up) makes libz's PLT direct through a moved
# copy, never writing it in place.
by_copy() {
	local how=$1 what=$2 m t rc mremaps windows bad wx pw extra libz_rw libz_pw
	shift 2
	for m in "$@"; do
		t=$D/$how.$m.trace
		LD_LIBRARY_PATH=$LIBDIR FINEIBT_CFI=$m FINEIBT_VERBOSE=1 strace -f -o "$t" "$D/rt_plt_inplace" "$how" \
			>"$D/$how.$m.out" 2>"$D/$how.$m.err"
		rc=$?
		read -r mremaps windows bad wx pw extra < <(check "$t" all)
		read -r _ libz_rw _ _ libz_pw _ < <(check "$t" all 'libz\.so\.1[^"]*')
		if [ "$rc" = 0 ] && [ "$(cat "$D/$how.$m.out")" = loaded ] &&
		   [ "$mremaps" -ge 1 ] && [ "$libz_rw" = 0 ] && [ "$libz_pw" = 0 ] && [ "$wx" = 0 ] &&
		   grep -q 'libz\.so\.1: [0-9]* PLT entries made direct' "$D/$how.$m.err"; then
			rt_pass "plt_inplace_$how[$m]: $what, libz's PLT by a moved copy, made direct"
		else
			rt_fail "plt_inplace_$how[$m]" "rc=$rc out=$(cat "$D/$how.$m.out") mremaps=$mremaps libz rw=$libz_rw pwrites=$libz_pw wx=$wx $(grep PLT "$D/$how.$m.err" | head -2)"
		fi
	done
}
by_copy thread "with a thread" auto fineibt
by_copy alone "after start-up, alone" auto kcfi
