#!/usr/bin/env python3
"""Generate malformed ELF inputs for the ELF reader from a good seed file.

Usage: gen.py SEED OUTDIR

Writes OUTDIR/err-<case>: inputs every reader entry point must refuse with
an error (fineibt inspect: exit 1, one "fineibt: error: ..." line), and
OUTDIR/any-<case>: inputs that are well-formed ELF with garbage kCFI
metadata, which must not crash (exit 0 or 1). Also OUTDIR/err-directory/
(a directory). Deterministic: same seed file, same corpus. The fuzzing
harness can seed its corpus from OUTDIR.
"""
import os
import struct
import sys

EH = struct.Struct("<16sHHIQQQIHHHHHH")
PH = struct.Struct("<IIQQQQQQ")
SH = struct.Struct("<IIQQQQIIQQ")


class Elf:
    def __init__(self, data):
        self.d = bytearray(data)
        (self.ident, self.type, self.machine, self.version, self.entry,
         self.phoff, self.shoff, self.flags, self.ehsize, self.phentsize,
         self.phnum, self.shentsize, self.shnum, self.shstrndx) = EH.unpack_from(self.d, 0)
        self.sh = [list(SH.unpack_from(self.d, self.shoff + i * 64)) for i in range(self.shnum)]
        self.ph = [list(PH.unpack_from(self.d, self.phoff + i * 56)) for i in range(self.phnum)]
        strtab = self.sh[self.shstrndx]
        self.names = []
        for s in self.sh:
            off = strtab[4] + s[0]
            self.names.append(bytes(self.d[off:self.d.index(b"\0", off)]).decode())

    def sec(self, name):
        return self.names.index(name)

    def copy(self):
        return Elf(bytes(self.d))


def eh_set(d, field, value):
    """Overwrite one ELF header field by name."""
    offs = {"class": (4, "B"), "data": (5, "B"), "ident_version": (6, "B"),
            "type": (16, "H"), "machine": (18, "H"), "version": (20, "I"),
            "phoff": (32, "Q"), "shoff": (40, "Q"), "ehsize": (52, "H"),
            "phentsize": (54, "H"), "phnum": (56, "H"), "shentsize": (58, "H"),
            "shnum": (60, "H"), "shstrndx": (62, "H")}
    off, fmt = offs[field]
    struct.pack_into("<" + fmt, d, off, value)
    return d


def sh_set(e, idx, field, value):
    fields = ["name", "type", "flags", "addr", "offset", "size", "link", "info",
              "addralign", "entsize"]
    s = list(SH.unpack_from(e.d, e.shoff + idx * 64))
    s[fields.index(field)] = value
    SH.pack_into(e.d, e.shoff + idx * 64, *s)
    return e.d


def ph_set(e, idx, field, value):
    fields = ["type", "flags", "offset", "vaddr", "paddr", "filesz", "memsz", "align"]
    p = list(PH.unpack_from(e.d, e.phoff + idx * 56))
    p[fields.index(field)] = value
    PH.pack_into(e.d, e.phoff + idx * 56, *p)
    return e.d


def loads(e):
    return [i for i, p in enumerate(e.ph) if p[0] == 1]


def cases(seed):
    e = Elf(seed)
    n = len(seed)
    err, anyc = {}, {}
    err["empty"] = b""
    err["not-elf"] = b"#!/bin/sh\necho this is not an ELF file\n"
    err["magic-only"] = b"\x7fELF"
    err["elf-prefix-garbage"] = b"\x7fELF" + bytes((i * 37 + 11) & 0xff for i in range(300))
    # truncated at many points: inside the header, the program headers,
    # the sections, the section header table, one byte short
    cuts = {1, 4, 5, 16, 17, 63, 64, 65, e.phoff + 1, e.phoff + 56 * e.phnum - 1,
            n // 4, n // 2, (3 * n) // 4, e.shoff, e.shoff + 1, e.shoff + 64 * e.shnum // 2,
            n - 1}
    for s in e.sh:
        if s[1] != 8 and s[5] and s[4] + s[5] // 2 < n:
            cuts.add(s[4] + s[5] // 2)
    for c in sorted(cuts):
        if 0 < c < n:
            err["truncated-%06d" % c] = seed[:c]
    d = bytearray(seed)
    err["class32"] = eh_set(bytearray(seed), "class", 1)
    err["class-bad"] = eh_set(bytearray(seed), "class", 7)
    err["big-endian"] = eh_set(bytearray(seed), "data", 2)
    err["version-bad"] = eh_set(bytearray(seed), "version", 9)
    err["machine-i386"] = eh_set(bytearray(seed), "machine", 3)
    err["machine-aarch64"] = eh_set(bytearray(seed), "machine", 183)
    err["type-rel"] = eh_set(bytearray(seed), "type", 1)
    err["type-core"] = eh_set(bytearray(seed), "type", 4)
    err["ehsize-small"] = eh_set(bytearray(seed), "ehsize", 10)
    err["phoff-past-eof"] = eh_set(bytearray(seed), "phoff", n + 100)
    err["phoff-huge"] = eh_set(bytearray(seed), "phoff", 2**64 - 8)
    err["phnum-huge"] = eh_set(bytearray(seed), "phnum", 0xfffe)
    err["phnum-xnum"] = eh_set(bytearray(seed), "phnum", 0xffff)
    err["phnum-zero"] = eh_set(bytearray(seed), "phnum", 0)
    err["phentsize-bad"] = eh_set(bytearray(seed), "phentsize", 40)
    err["phdrs-over-ehdr"] = eh_set(bytearray(seed), "phoff", 8)
    err["shoff-past-eof"] = eh_set(bytearray(seed), "shoff", n + 4096)
    err["shoff-huge"] = eh_set(bytearray(seed), "shoff", 2**64 - 64)
    err["shnum-huge"] = eh_set(bytearray(seed), "shnum", 0xfeff)
    err["shentsize-bad"] = eh_set(bytearray(seed), "shentsize", 32)
    err["shstrndx-out-of-range"] = eh_set(bytearray(seed), "shstrndx", e.shnum + 5)
    err["shstrndx-not-strtab"] = eh_set(bytearray(seed), "shstrndx", e.sec(".text"))
    err["shdrs-over-ehdr"] = eh_set(bytearray(seed), "shoff", 0x10)
    err["shdrs-over-phdrs"] = eh_set(bytearray(seed), "shoff", e.phoff)
    x = e.copy(); eh_set(x.d, "shnum", 0); sh_set(x, 0, "size", 2**40)
    err["shnum-extended-huge"] = x.d
    x = e.copy(); eh_set(x.d, "shstrndx", 0xffff); sh_set(x, 0, "link", 60000)
    err["shstrndx-extended-bad"] = x.d
    for name in (".kcfi_traps", "__patchable_function_entries", ".symtab", ".strtab",
                 ".text", ".rela.dyn"):
        i = e.sec(name)
        tag = name.strip(".").replace(".", "-").strip("_")
        x = e.copy(); err["sec-offset-past-eof-" + tag] = sh_set(x, i, "offset", n + 16)
        x = e.copy(); err["sec-size-huge-" + tag] = sh_set(x, i, "size", 2**63 + 8)
        x = e.copy(); err["sec-size-wraps-" + tag] = sh_set(x, i, "size", 2**64 - 4)
    sym, st = e.sec(".symtab"), e.sec(".strtab")
    x = e.copy(); err["symtab-entsize"] = sh_set(x, sym, "entsize", 16)
    x = e.copy(); err["symtab-size-odd"] = sh_set(x, sym, "size", e.sh[sym][5] - 5)
    x = e.copy(); err["symtab-link-self"] = sh_set(x, sym, "link", sym)
    x = e.copy(); err["symtab-link-out-of-range"] = sh_set(x, sym, "link", 5000)
    x = e.copy(); err["symtab-link-not-strtab"] = sh_set(x, sym, "link", e.sec(".text"))
    x = e.copy(); x.d[e.sh[st][4] + e.sh[st][5] - 1] = ord("A")
    err["strtab-unterminated"] = x.d
    x = e.copy(); struct.pack_into("<I", x.d, e.sh[sym][4] + 24 * 3, 0x7fffffff)
    err["symbol-name-out-of-range"] = x.d
    x = e.copy(); x.d[e.sh[e.shstrndx][4] + e.sh[e.shstrndx][5] - 1] = ord("Z")
    err["shstrtab-unterminated"] = x.d
    x = e.copy(); err["section-name-out-of-range"] = sh_set(x, e.sec(".text"), "name", 2**31)
    x = e.copy(); err["kcfi-traps-size-odd"] = sh_set(x, e.sec(".kcfi_traps"), "size", 6)
    pfe = e.sec("__patchable_function_entries")
    x = e.copy(); err["pfe-size-odd"] = sh_set(x, pfe, "size", 12)
    x = e.copy(); err["rela-entsize"] = sh_set(x, e.sec(".rela.dyn"), "entsize", 8)
    L = loads(e)
    x = e.copy(); err["load-offset-past-eof"] = ph_set(x, L[1], "offset", n + 1)
    x = e.copy(); err["load-filesz-past-eof"] = ph_set(x, L[1], "filesz", 2**62)
    x = e.copy(); err["load-filesz-over-memsz"] = ph_set(x, L[1], "memsz", 1)
    x = e.copy(); ph_set(x, L[1], "vaddr", 2**64 - 16); err["load-vaddr-wraps"] = x.d
    x = e.copy(); ph_set(x, L[1], "vaddr", e.ph[L[0]][3]); err["load-overlap"] = x.d
    x = e.copy()
    for i in L:
        ph_set(x, i, "flags", e.ph[i][1] & ~1)
    err["no-exec-segment"] = x.d
    x = e.copy()
    for i in range(e.phnum):
        ph_set(x, i, "type", 6 if e.ph[i][0] == 1 else e.ph[i][0])
    err["no-load-segment"] = x.d
    # Well-formed ELF, garbage kCFI metadata: must not crash.
    t = e.sh[e.sec(".kcfi_traps")]
    x = e.copy()
    for k in range(0, t[5], 4):
        struct.pack_into("<i", x.d, t[4] + k, (-1) ** k * (0x7fffffff - k))
    anyc["kcfi-traps-garbage"] = x.d
    x = e.copy()
    for k in range(0, t[5], 4):
        struct.pack_into("<i", x.d, t[4] + k, 0)
    anyc["kcfi-traps-self"] = x.d
    p = e.sh[pfe]
    x = e.copy()
    for k in range(0, p[5], 8):
        struct.pack_into("<Q", x.d, p[4] + k, 2**64 - 1 - k)
    x2 = x.copy(); sh_set(x2, e.sec(".rela.dyn"), "size", 0)
    anyc["pfe-garbage-no-rela"] = x2.d
    r = e.sh[e.sec(".rela.dyn")]
    x = e.copy()
    for k in range(0, r[5], 24):
        struct.pack_into("<q", x.d, r[4] + k + 16, -5 - k)
    anyc["rela-addends-garbage"] = x.d
    x = e.copy()
    for k in range(0, r[5], 24):
        struct.pack_into("<Q", x.d, r[4] + k + 8, (0xffffffff << 32) | 1)
    anyc["rela-r64-bad-symbol"] = x.d
    x = e.copy(); tx = e.sh[e.sec(".text")]
    x.d[tx[4]:tx[4] + tx[5]] = bytes((k * 131 + 7) & 0xff for k in range(tx[5]))
    anyc["text-garbage"] = x.d
    x = e.copy(); tx = e.sh[e.sec(".text")]
    x.d[tx[4]:tx[4] + tx[5]] = (b"\x2e\xe8" + b"\0" * 4) * (tx[5] // 6) + b"\0" * (tx[5] % 6)
    anyc["text-thunk-prefixes"] = x.d
    x = e.copy(); err_free = sh_set(x, sym, "type", 0)
    anyc["no-symtab"] = err_free
    x = e.copy(); eh_set(x.d, "shoff", 0); eh_set(x.d, "shnum", 0); eh_set(x.d, "shstrndx", 0)
    anyc["no-sections"] = x.d
    return err, anyc


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    seed = open(sys.argv[1], "rb").read()
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    os.makedirs(os.path.join(out, "err-directory"), exist_ok=True)
    err, anyc = cases(seed)
    for prefix, group in (("err-", err), ("any-", anyc)):
        for name, data in group.items():
            with open(os.path.join(out, prefix + name), "wb") as f:
                f.write(bytes(data))
    print("%d error cases, %d must-not-crash cases, 1 directory" % (len(err), len(anyc)))


if __name__ == "__main__":
    main()
