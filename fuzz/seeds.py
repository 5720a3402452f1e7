#!/usr/bin/env python3
"""Seed corpora for the fuzz harnesses (fuzz/run.sh calls this).

Usage: seeds.py FINEIBT PROGSDIR MALFORMEDDIR OUTDIR

OUTDIR/elf (also used by inspect and patch): every kCFI test program,
statically patched copies in several modes, the malformed corpus.
OUTDIR/trap: windows of real text around call sites and preambles, in
compiler and patched forms, with the fuzz_trap header (see fuzz_trap.c)
pointing the ip at the trapping instruction. OUTDIR/options, OUTDIR/note:
cfi= lists and note records. Deterministic.
"""
import json, os, shutil, struct, subprocess, sys

fibt, progs, malformed, out = sys.argv[1:5]
for d in ("elf", "trap", "options", "note"):
    os.makedirs(os.path.join(out, d), exist_ok=True)

def put(kind, name, data):
    with open(os.path.join(out, kind, name), "wb") as f:
        f.write(data)

elfs = []
for n in sorted(os.listdir(progs)):
    p = os.path.join(progs, n)
    if os.path.isfile(p) and not n.startswith("."):
        elfs.append(p)
patched = os.path.join(out, "patched")
os.makedirs(patched, exist_ok=True)
for src in ("prog_pie", "prog_nopie", "libfiprog.so", "prog_bhi"):
    for mode in ("off", "kcfi", "fineibt", "fineibt,paranoid", "fineibt,bhi",
                 "fineibt,paranoid,bhi,warn"):
        dst = os.path.join(patched, src + "." + mode.replace(",", "_"))
        r = subprocess.run([fibt, "patch", os.path.join(progs, src), "-o", dst,
                            "--cfi=" + mode, "--seed", "1234"],
                           capture_output=True)
        if r.returncode == 0:
            elfs.append(dst)
for p in elfs:
    shutil.copy(p, os.path.join(out, "elf", os.path.basename(p)))
for n in sorted(os.listdir(malformed)):
    p = os.path.join(malformed, n)
    if os.path.isfile(p):
        shutil.copy(p, os.path.join(out, "elf", "malformed-" + n))

# --- trap windows -----------------------------------------------------
def loads(data):
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    segs = []
    for i in range(phnum):
        t, fl, off, va, pa, fsz, msz, al = struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i)
        if t == 1 and fl & 1:
            segs.append((va, off, fsz))
    return segs

def window(data, segs, lo, hi):
    for va, off, fsz in segs:
        if va <= lo and hi <= va + fsz:
            return data[off + lo - va: off + hi - va]
    return None

def header(flags, ip, r10, r11, ret, traps):
    traps = (traps + [0, 0, 0, 0])[:4]
    return struct.pack("<BHQQHB4H", flags, ip, r10, r11, ret, len([t for t in traps if t]) or 0, *traps)

count = 0
for p in elfs:
    r = subprocess.run([fibt, "inspect", p, "--json", "--list"], capture_output=True, text=True)
    if r.returncode:
        continue
    try:
        j = json.loads(r.stdout)
    except ValueError:
        continue
    data = open(p, "rb").read()
    segs = loads(data)
    sites = j.get("sites", {})
    for c in sites.get("calls", [])[:6]:
        a = int(c["address"], 16)
        w = window(data, segs, a - 48, a + 80)
        if w is None:
            continue
        ud = 48 + 12
        for flags, ip in ((0x40, ud), (0x41, 48 + 13), (0x06, ud)):
            put("trap", "call-%d" % count, header(flags, ip, 0x1234, 0x10, 0, [ud]) + w)
            count += 1
    for f in sites.get("preambles", [])[:6]:
        a = int(f["address"], 16)
        w = window(data, segs, a - 64, a + 64)
        if w is None:
            continue
        pre = 64 - 16
        put("trap", "pre-%d" % count, header(0x02, pre + 6, 0x55, 0, 0, []) + w)
        put("trap", "bhi-%d" % count, header(0x82, 0, 0x55, 0, 64, []) + w)
        count += 2

for i, s in enumerate(["auto", "off", "kcfi", "fineibt", "fineibt,paranoid,bhi,warn",
                       "norand,fineibt,paranoid", "FINEIBT , Warn,,", "kcfi,paranoid",
                       "bhi", "fineibt,off,bhi", "x" * 300, ",,,", "fin\xe9ibt"]):
    put("options", "opt-%d" % i, s.encode("utf-8", "surrogateescape"))

note = b"FIBT" + struct.pack("<HHB3xIIIQ7II", 1, 64, 3, 0xd, 0xdeadbeef, 0, 0x1000,
                             1, 2, 3, 4, 5, 6, 7, 0)
put("note", "v1", note)
put("note", "v2", b"FIBT" + struct.pack("<HH", 2, 80) + bytes(72))
put("note", "short", note[:20])
put("note", "v3", b"FIBT" + struct.pack("<HHB3xIIIQ7II", 3, 80, 3, 0xd, 0, 0, 0x1000,
                                        1, 2, 3, 4, 5, 6, 7, 0) + bytes(range(16)))
# OUTDIR/dwarf (fuzz_dwarf.c): the debug sections of -g test programs,
# u64 function address + u32 lengths + sections, .debug_info last.
def dwarf_seed(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3c)
    shdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    stro = shdrs[shstrndx][4]
    secs = {}
    for h in shdrs:
        name = data[stro + h[0]:data.index(b"\0", stro + h[0])].decode()
        secs[name] = (h, data[h[4]:h[4] + h[5]] if h[1] != 8 else b"")
    if ".debug_info" not in secs or ".symtab" not in secs:
        return None
    funcs = []
    st, strtab = secs[".symtab"][1], secs[".strtab"][1]
    for i in range(0, len(st) - 23, 24):
        _, info, _, _, value, _ = struct.unpack_from("<IBBHQQ", st, i)
        if info & 0xf == 2 and value:
            funcs.append(value)
    order = (".debug_abbrev", ".debug_str", ".debug_str_offsets", ".debug_addr",
             ".debug_line", ".debug_line_str")
    body = [secs.get(n, (None, b""))[1] for n in order]
    head = struct.pack("<6I", *[len(b) for b in body])
    return [struct.pack("<Q", a) + head + b"".join(body) + secs[".debug_info"][1]
            for a in sorted(funcs)[:4]]

os.makedirs(os.path.join(out, "dwarf"), exist_ok=True)
ndwarf = 0
for p in elfs[:6]:
    try:
        seeds_of = dwarf_seed(p) or []
    except (struct.error, ValueError, IndexError):
        seeds_of = []
    for k, s in enumerate(seeds_of):
        put("dwarf", "%s-%d" % (os.path.basename(p), k), s)
        ndwarf += 1

print("seeds: %d ELF files, %d trap windows" % (len(os.listdir(os.path.join(out, "elf"))), count))
print("seeds: %d DWARF inputs" % ndwarf)
