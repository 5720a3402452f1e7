#!/usr/bin/env bash
# rt_traps_in_place: the trap handler reads a module's .kcfi_traps where
# the loader mapped it when that is safe (docs/index.md, "The trap list in
# place"): inside a PT_LOAD that is only readable, entries sorted. The
# same executable three ways: as linked (in place), with that segment made
# writable in its program header (its headers and index then writable too:
# not registered, below), and with the list's entries reversed (unsorted:
# a sorted copy). In every mode whose caller checks, a call through a
# pointer of the wrong type kills the process with SIGILL, reported as a
# CFI failure where the module is registered (the handler found the ud2
# in its list).
. "$(dirname "$0")/progs/rt_lib.bash"

D=$RT_OUT/traps_in_place
mkdir -p "$D"
# fineibt_debug_object is in the test build of the runtime only (Makefile,
# TESTLIB): the programs run against it (through LD_LIBRARY_PATH: linked
# with the runtime's soname, FINEIBT_CC_RUNPATH=1).
TESTLIB=$ROOT/$BUILD/testlib
FINEIBT_CC_RUNPATH=1 rt_build "$D/ktraps" -O1 "$RT_SRC/rt_ktraps.c" -ldl ||
	{ rt_fail build "fineibt-cc could not build the program"; exit 1; }

# variant IN OUT writable|reversed
variant() {
	python3 - "$@" <<'PY'
import struct, sys
src, out, how = sys.argv[1:4]
b = bytearray(open(src, 'rb').read())
phoff, = struct.unpack_from('<Q', b, 0x20)
shoff, = struct.unpack_from('<Q', b, 0x28)
phnum, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x38)[0], *struct.unpack_from('<HH', b, 0x3c)
def sh(i):
    return struct.unpack_from('<IIQQQQIIQQ', b, shoff + 64 * i)
strtab = sh(shstrndx)
def name(i):
    o = strtab[4] + sh(i)[0]
    return bytes(b[o:b.index(b'\0', o)]).decode()
t = [sh(i) for i in range(shnum) if name(i) == '.kcfi_traps'][0]
addr, off, size = t[3], t[4], t[5]
if how == 'writable':
    for i in range(phnum):
        p = phoff + 56 * i
        ptype, flags = struct.unpack_from('<II', b, p)
        vaddr, = struct.unpack_from('<Q', b, p + 16)
        memsz, = struct.unpack_from('<Q', b, p + 40)
        if ptype == 1 and vaddr <= addr < vaddr + memsz:
            assert flags == 4, flags
            struct.pack_into('<I', b, p + 4, 6)
else:
    n = size // 4
    assert n > 1
    tg = [addr + 4 * i + struct.unpack_from('<i', b, off + 4 * i)[0] for i in range(n)]
    for i, x in enumerate(reversed(tg)):
        struct.pack_into('<i', b, off + 4 * i, x - (addr + 4 * i))
open(out, 'wb').write(b)
PY
	chmod +x "$2"
}
variant "$D/ktraps" "$D/ktraps-writable" writable &&
variant "$D/ktraps" "$D/ktraps-reversed" reversed ||
	{ rt_fail variants "could not rewrite the copies"; exit 1; }

# ktraps-writable: flipping the segment of .kcfi_traps writable makes the
# program headers and the module index writable too (one read-only
# PT_LOAD holds them all): the runtime trusts no record whose headers a
# write could change (docs/protection.md, "Records built from scratch"),
# so the module is not registered and its checks stay fatal, undecoded.
for m in "${RT_MODES[@]}"; do
	for v in ktraps:in-module ktraps-writable:refused ktraps-reversed:copied; do
		p=${v%%:*} want=${v#*:}
		rt_run "$p" "$m" env LD_LIBRARY_PATH="$TESTLIB" "$D/$p"
		if [ "$want" = refused ]; then
			if [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "traps none" ] &&
			   grep -q "$p: cannot register (Bad message)" <<<"$RT_ERR_TXT"; then
				rt_pass "where[$p,$m]: not registered"
			else
				rt_fail "where[$p,$m]" "want 'cannot register': rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
			fi
		elif [ "$RT_RC" = 0 ] && [ "$RT_OUT_TXT" = "traps $want" ]; then
			rt_pass "where[$p,$m]: $want"
		else
			rt_fail "where[$p,$m]" "want 'traps $want': rc=$RT_RC out='$RT_OUT_TXT' err='$RT_ERR_TXT'"
		fi
		rt_checks_caller "$m" || continue
		rt_run "$p-bad" "$m" env LD_LIBRARY_PATH="$TESTLIB" "$D/$p" bad
		if [ "$want" = refused ]; then
			if [ "$RT_RC" = 132 ] && grep -q "not registered; not decoded" <<<"$RT_ERR_TXT"; then
				rt_pass "trap[$p,$m]: fatal, not decoded"
			else
				rt_fail "trap[$p,$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
			fi
		elif [ "$RT_RC" = 132 ] && grep -Eq "$RT_REPORT_RE" <<<"$RT_ERR_TXT"; then
			rt_pass "trap[$p,$m]: reported from the list"
		else
			rt_fail "trap[$p,$m]" "rc=$RT_RC err='$RT_ERR_TXT'"
		fi
	done
done
