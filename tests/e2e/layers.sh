#!/usr/bin/env bash
# layers: the layering of src/ (docs/architecture.md) holds.
#  - every src/ file includes only headers of its own folder or of a lower
#    layer (trap/ and jit/, load/ and offline/ are siblings: neither includes
#    the other); every folder has a rank; no header name is in two folders
#  - no two modules (x.c + x.h) include each other, directly or through
#    headers
#  - no two object files call each other (through any chain: no cycle in
#    the graph "uses a symbol defined by", weak references included) in
#    src/, driver/ and tools/, each circle printed as the calls that close
#    it; calls go down the layers, except to print.h's functions (declared in core/,
#    kept by rt/: the hook lives in the read-only state), to libc's
#    interposed entry points (dlsym, sigaction, ...) and through the
#    runtime variant's const table (src/rt/variant.h), whose entries are
#    listed here (UPCALLS) and which must sit in .data.rel.ro (RELRO)
#  - libfineibt.so and libfineibt.a hold nothing of src/offline/;
#    libfineibt.so holds no CLI-only entry point (a function of src/ that
#    only tools/ or driver/ call: --gc-sections leaves it out) and exports
#    nothing but the version script's names
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
ROOT=$PWD
export BUILD
CHECK=$(mktemp)
trap 'rm -rf "$CHECK" "$CHECK.d"' EXIT

cat >"$CHECK" <<'EOF'
import glob, os, re, subprocess, sys

BUILD = os.environ["BUILD"]
RANK = {"seq": 0, "core": 1, "elf": 2, "pass": 3, "rt": 4,
        "trap": 5, "jit": 5, "load": 6, "offline": 6, "interpose": 7}
# The calls that go up: through each runtime variant's const table
# (src/rt/variant.h), the one symbol below that lower layers may use,
# defined by these objects, holding exactly these functions (NULL
# entries aside). A new upcall is a new entry here and in variant.h.
UPCALL_TABLE = "fi_variant"
UPCALLS = {
    "interpose/variant_so.c": {"fi_sig_sigaction", "fi_sig_own", "fi_sig_is_own",
                               "fi_dlhook_prime", "fi_bind_interposers",
                               "fi_bind_want", "fi_early_said_plain",
                               "fi_early_forget", "fi_early_first_unrun",
                               "fi_alloc_libc_bytes",
                               "fi_env_startup", "fi_next_libc"},
    "interpose/variant_a.c": {"fi_sig_sigaction", "fi_sig_own", "fi_sig_is_own",
                              "fi_dlhook_prime", "fi_next_libc"},
}
# The calls that go up by name: plain functions of src/interpose/ (both
# variants have them), declared below their callers in src/rt/upcall.h and
# listed here with each caller (its object, as src/FOLDER/FILE.c): no
# other object may call them, and nothing else may go up. The header
# declares exactly these names, and each caller still makes each call it
# is listed for. A circle through one of them is still a circle.
UPCALL_HEADER = "upcall.h"
DIRECT_UPCALLS = {
    "trap/trap.c": {"fi_foreign_site_head", "fi_foreign_take"},
    "trap/reportline.c": {"fi_foreign_name_near", "fi_foreign_slot_target"},
    "trap/coarsetrap.c": {"fi_foreign_slot_target"},
    "trap/stockven.c": {"fi_foreign_is_code"},
    "load/pltwalk.c": {"fi_plt_any_writable", "fi_plt_direct"},
}
# Declared low, defined above (see the header): callers in any layer.
INVERTED = {"print.h"}

fails = 0
def check(name, ok, why=""):
    global fails
    if ok:
        print("PASS: " + name)
    else:
        fails += 1
        print("FAIL: %s: %s" % (name, why))

files = sorted(glob.glob("src/*/*.[chS]"))
folders = sorted({f.split("/")[1] for f in files})
check("layers_ranked", all(d in RANK for d in folders),
      "folders without a rank: %s" % [d for d in folders if d not in RANK])

where = {}
dups = []
for f in files:
    b = os.path.basename(f)
    if f.endswith(".h"):
        if b in where:
            dups.append(b)
        where[b] = f.split("/")[1]
check("layers_unique_headers", not dups, "in two folders: %s" % dups)

inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
def includes(path):
    with open(path, errors="replace") as fh:
        return [os.path.basename(i) for i in inc_re.findall(fh.read())]

bad = []
for f in files:
    d = f.split("/")[1]
    for h in includes(f):
        hd = where.get(h)
        if hd is None or hd == d:
            continue
        if not (RANK.get(hd, 99) < RANK.get(d, -1)):
            bad.append("%s includes %s/%s" % (f, hd, h))
check("layers_includes_point_down", not bad, "; ".join(bad))
print("layers: %d files, %d include lines checked" %
      (len(files), sum(len(includes(f)) for f in files)))

# Modules: x.c with x.h. Header closure: what a file includes through headers.
hpath = {os.path.basename(f): f for f in files if f.endswith(".h")}
for f in glob.glob("driver/*.h") + glob.glob("include/*.h"):
    hpath.setdefault(os.path.basename(f), f)
def closure(path, seen=None):
    seen = set() if seen is None else seen
    for h in includes(path):
        if h in hpath and h not in seen:
            seen.add(h)
            closure(hpath[h], seen)
    return seen
# A module is folder/stem: a stem may repeat in two folders (a .c and a
# .h of one stem in two folders are two modules).
mods = {}
for f in files + glob.glob("driver/*.[ch]"):
    mods.setdefault(os.path.splitext(f)[0], []).append(f)
hmod = {os.path.basename(f): os.path.splitext(f)[0] for f in hpath.values()}
uses = {m: set() for m in mods}
for m, fs in mods.items():
    for f in fs:
        for h in closure(f):
            hm = hmod.get(h)
            if hm and hm != m and hm in mods:
                uses[m].add(hm)
pairs = sorted({tuple(sorted((a, b))) for a in uses for b in uses[a]
                if a in uses.get(b, ())})
check("layers_no_include_pairs", not pairs,
      ", ".join("%s <-> %s" % p for p in pairs))

# Libc's interposed names (GLIBC_* blocks of the version script).
glibc = set()
block = None
for line in open("src/libfineibt.map"):
    m = re.match(r"\s*([\w.]+)\s*\{", line)
    if m:
        block = m.group(1)
    elif block and block.startswith("GLIBC"):
        glibc.update(re.findall(r"^\s*(\w+);", line))
def declared(h):
    txt = re.sub(r"/\*.*?\*/", "", open(hpath[h]).read(), flags=re.S)
    return set(re.findall(r"\b(fi_\w+)\(", txt))
inverted = set()
for h in INVERTED:
    inverted |= declared(h)
want = set().union(*DIRECT_UPCALLS.values())
have = declared(UPCALL_HEADER) if UPCALL_HEADER in hpath else set()
check("layers_upcall_header", have == want,
      "%s declares %s, layers.sh lists %s" % (UPCALL_HEADER, sorted(have), sorted(want)))

# What a sanitizer build (make SAN=1) adds to every object: calls into
# the sanitizers' runtime and their registration of globals, no layer's.
SAN_NAME = re.compile(r"__(asan|ubsan|lsan|sanitizer|odr_asan)\w*|"
                      r"__(start|stop)_asan_globals|___asan\w*")

def nm(o):
    out = subprocess.run(["nm", "-P", o], capture_output=True, text=True).stdout
    d, u = set(), set()
    for l in out.splitlines():
        p = l.split()
        if len(p) < 2 or SAN_NAME.fullmatch(p[0]):
            continue
        # U: undefined; w, v: weak undefined (a function, an object): a
        # weak reference is a call all the same when the definition is
        # linked in.
        if p[1] in ("U", "w", "v"):
            u.add(p[0])
        elif p[1] in "TDBRVW":
            d.add(p[0])
    return d, u

def graph(objs):
    defs, und = {}, {}
    for o in objs:
        defs[o], und[o] = nm(o)
    owner = {n: o for o in objs for n in defs[o]}
    edges = {o: {} for o in objs}
    for o in objs:
        for n in und[o]:
            t = owner.get(n)
            if t and t != o and n not in glibc:
                edges[o].setdefault(t, []).append(n)
    return edges

def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop(); on.discard(w); c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                out.append(sorted(c))
    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out

def short(o):
    return o.replace(BUILD + "/obj/", "").replace(".c.o", ".c").replace(".S.o", ".S")

for part, pat in (("src", BUILD + "/obj/*/*.[cS].o"), ("driver", BUILD + "/obj/driver/*.o"),
                  ("tools", BUILD + "/obj/tools/*.o")):
    objs = sorted(o for o in glob.glob(pat)
                  if part != "src" or o.split("/")[-2] in RANK)
    if not objs:
        check("layers_objects_" + part, False, "no objects under %s (run make)" % pat)
        continue
    e = graph(objs)
    if part == "src":
        # The table's users reach it as data: list them, check what the
        # tables hold, and leave those edges out of the circles.
        users = sorted(short(o) for o in e for t in e[o]
                       if UPCALL_TABLE in e[o][t])
        print("layers: upcalls through %s from: %s" % (UPCALL_TABLE, " ".join(users)))
        for t, want in UPCALLS.items():
            o = BUILD + "/obj/" + t + ".o"
            have = nm(o)[1] if os.path.exists(o) else None
            check("layers_upcalls[%s]" % t, have == want,
                  "holds %s, layers.sh lists %s" % (sorted(have or ()), sorted(want)))
            sec = subprocess.run(["objdump", "-t", o], capture_output=True,
                                 text=True).stdout if have is not None else ""
            check("layers_upcalls_relro[%s]" % t,
                  re.search(r"\s\.data\.rel\.ro\S*\s+\S+\s+(\.hidden\s+)?%s$" % UPCALL_TABLE,
                            sec, re.M), "%s is not in .data.rel.ro" % UPCALL_TABLE)
        # Where libfineibt.so has it: inside PT_GNU_RELRO.
        at = [(int(l.split()[0], 16), int(l.split()[1], 16)) for l in subprocess.run(
            ["nm", "-S", BUILD + "/libfineibt.so"], capture_output=True, text=True).stdout.splitlines()
            if l.split()[-1:] == [UPCALL_TABLE] and len(l.split()) == 4]
        relro = [(int(l.split()[2], 16), int(l.split()[5], 16)) for l in subprocess.run(
            ["readelf", "-lW", BUILD + "/libfineibt.so"], capture_output=True,
            text=True).stdout.splitlines() if l.split()[:1] == ["GNU_RELRO"]]
        check("layers_upcalls_relro[libfineibt.so]",
              len(at) == 1 and any(lo <= at[0][0] and sum(at[0]) <= lo + n for lo, n in relro),
              "%s at %s, GNU_RELRO %s" % (UPCALL_TABLE, at, relro))
        for o in e:
            for t in list(e[o]):
                e[o][t] = [n for n in e[o][t] if n != UPCALL_TABLE]
                if not e[o][t]:
                    del e[o][t]
    cyc = sccs(e)
    # Each circle as the calls that close it: "a.c -> b.c (names)".
    check("layers_no_call_cycles_" + part, not cyc,
          " | ".join("; ".join("%s -> %s (%s)" % (short(a), short(b), ", ".join(sorted(e[a][b])))
                               for a in c for b in sorted(e[a]) if b in c) for c in cyc))
    if part != "src":
        continue
    up, direct = [], {}
    for o, ts in e.items():
        a = o.split("/")[-2]
        for t, names in ts.items():
            b = t.split("/")[-2]
            if a == b or RANK[b] < RANK[a]:
                continue
            listed = DIRECT_UPCALLS.get(short(o), set())
            direct.setdefault(short(o), set()).update(n for n in names if n in listed)
            names = [x for x in names if x not in inverted and x not in listed]
            if names:
                up.append("%s -> %s (%s)" % (short(o), short(t), ", ".join(sorted(names))))
    check("layers_calls_point_down", not up, "; ".join(up))
    print("layers: direct upcalls: %s" % "; ".join(
        "%s (%s)" % (c, ", ".join(sorted(n))) for c, n in sorted(direct.items()) if n))
    stale = ["%s (%s)" % (c, ", ".join(sorted(n - direct.get(c, set()))))
             for c, n in sorted(DIRECT_UPCALLS.items()) if n - direct.get(c, set())]
    check("layers_direct_upcalls_made", not stale,
          "listed in layers.sh, no longer called up: %s" % "; ".join(stale))

# The runtime holds nothing of src/offline/.
offline = set()
for o in glob.glob(BUILD + "/obj/offline/*.o"):
    offline |= nm(o)[0]
so = BUILD + "/libfineibt.so"
ar = BUILD + "/libfineibt.a"
if not offline:
    check("layers_offline_objects", False, "no objects in %s/obj/offline (run make)" % BUILD)
else:
    syms = set(subprocess.run(["nm", "--defined-only", "-j", so], capture_output=True,
                              text=True).stdout.split())
    check("layers_so_no_offline_symbols", not (syms & offline), " ".join(sorted(syms & offline)))
    asyms = set(l.split()[0] for l in subprocess.run(["nm", "-P", "--defined-only", ar],
                capture_output=True, text=True).stdout.splitlines()
                if len(l.split()) > 1 and not l.endswith(":"))
    check("layers_a_no_offline_symbols", not (asyms & offline), " ".join(sorted(asyms & offline)))
    members = subprocess.run(["ar", "t", ar], capture_output=True, text=True).stdout.split()
    tnames = {os.path.basename(o) for o in glob.glob(BUILD + "/obj/offline/*.o")}
    check("layers_a_no_offline_objects", not (set(members) & tnames),
          " ".join(sorted(set(members) & tnames)))
# CLI-only entry points: defined in src/, used by tools/ or driver/, by no
# other src/ object, not exported: libfineibt.so must not hold them.
so_syms = set(subprocess.run(["nm", "--defined-only", "-j", so], capture_output=True,
                             text=True).stdout.split())
srcobjs = [o for o in glob.glob(BUILD + "/obj/*/*.[cS].o") if o.split("/")[-2] in RANK]
cli_use = set()
for o in glob.glob(BUILD + "/obj/tools/*.o") + glob.glob(BUILD + "/obj/driver/*.o"):
    cli_use |= nm(o)[1]
src_def, src_use = {}, set()
for o in srcobjs:
    d, u = nm(o)
    src_use |= u
    for n in d:
        src_def[n] = o
base = {n for n in cli_use if n in src_def and n not in src_use
        and not n.startswith("fineibt_")}
# Calls inside one object are relocations, not undefined names: a name
# its own file's runtime code calls (an out-of-line copy the compiler
# did not inline, as in a SAN=1 build) is no CLI-only entry point. Each
# function and object has its section (-ffunction-sections,
# -fdata-sections); a reference from the section of a name still
# counted CLI-only does not count, until no more drop out.
SEC_OF = re.compile(r"\.rela\.(?:text|data|rodata|bss|data\.rel\.ro)(?:\.local)?\.(\S+)")
refs = []
for o in sorted({src_def[n] for n in base}):
    sec = None
    for l in subprocess.run(["readelf", "-rW", o], capture_output=True,
                            text=True).stdout.splitlines():
        m = re.match(r"Relocation section '([^']+)'", l)
        if m:
            sec = SEC_OF.fullmatch(m.group(1))
            sec = sec.group(1) if sec else None
            continue
        p = l.split()
        if sec and len(p) >= 5 and p[2].startswith("R_X86_64") and p[4] in base:
            if p[4] != sec:
                refs.append((sec, p[4]))
cli = set(base)
while True:
    used = {n for by, n in refs if by not in cli}
    if not (cli & used):
        break
    cli -= used
cli_only = sorted(cli)
print("layers: CLI-only entry points: %s" % " ".join(cli_only))
# ASan registers every global it instruments (__odr_asan_gen_NAME): a
# SAN=1 libfineibt.so keeps such data whoever uses it.
held = sorted(n for n in set(cli_only) & so_syms
              if "__odr_asan_gen_" + n not in so_syms)
check("layers_so_no_cli_only", cli_only and not held,
      "in libfineibt.so: %s" % " ".join(held))
dyn = subprocess.run(["nm", "-D", "--defined-only", "-j", so], capture_output=True,
                     text=True).stdout.split()
pats = [r"fineibt_\w+", r"__bhi_args(_end)?", r"__x86_indirect_thunk_\w+", r"__fineibt_coarse"] + \
       [re.escape(g) for g in glibc] + [r"GLIBC_[\d.]+", r"FINEIBT_[\d.]+"]
extra = [s for s in dyn if not any(re.fullmatch(p, s.split("@")[0]) for p in pats)]
check("layers_so_exports", dyn and not extra, "unexpected exports: %s" % extra)
sys.exit(1 if fails else 0)
EOF

python3 "$CHECK"
rc=$?

# The checker itself: a copy of src/ with a lower layer including a higher
# one, a pair of modules including each other and a call up declared in
# upcall.h that DIRECT_UPCALLS does not list must fail the three checks.
mkdir -p "$CHECK.d" && cp -r src "$CHECK.d/" &&
	echo '#include "runtime.h"' >>"$CHECK.d/src/seq/insn.h" &&
	echo '#include "trap.h"' >>"$CHECK.d/src/trap/report.c" &&
	echo 'void fi_lt_unlisted(void);' >>"$CHECK.d/src/rt/upcall.h"
out=$(cd "$CHECK.d" && BUILD="$ROOT/$BUILD" python3 "$CHECK" 2>&1)
for c in layers_includes_point_down layers_no_include_pairs layers_upcall_header; do
	if grep -q "^FAIL: $c:" <<<"$out"; then
		echo "PASS: layers_selftest[$c]"
	else
		echo "FAIL: layers_selftest[$c]: a planted violation was not found"
		rc=1
	fi
done

# A circle held by a weak reference (nm's "w") must be found too: two
# objects, one calling the other, which calls back through a weak symbol.
mkdir -p "$CHECK.d/obj/obj/seq" &&
	printf 'void fi_lt_b(void);\nvoid fi_lt_a(void) { fi_lt_b(); }\n' >"$CHECK.d/a.c" &&
	printf 'void fi_lt_a(void) __attribute__((weak));\nvoid fi_lt_b(void) { if (fi_lt_a) fi_lt_a(); }\n' >"$CHECK.d/b.c" &&
	${CC:-cc} -c -o "$CHECK.d/obj/obj/seq/a.c.o" "$CHECK.d/a.c" &&
	${CC:-cc} -c -o "$CHECK.d/obj/obj/seq/b.c.o" "$CHECK.d/b.c"
out=$(BUILD="$CHECK.d/obj" python3 "$CHECK" 2>&1)
if grep -q "^FAIL: layers_no_call_cycles_src:.*seq/b.c -> .*seq/a.c (fi_lt_a)" <<<"$out"; then
	echo "PASS: layers_selftest[weak_cycle]"
else
	echo "FAIL: layers_selftest[weak_cycle]: a circle through a weak reference was not found"
	rc=1
fi

# Calls up by name: a listed name called by an object DIRECT_UPCALLS does
# not list for it is an upcall all the same, and a circle through a listed
# call is a circle. trap/trap.c calls fi_foreign_take (listed), which
# calls back into it; trap/up.c calls fi_foreign_take too (not listed).
rm -rf "$CHECK.d/obj" && mkdir -p "$CHECK.d/obj/obj/trap" "$CHECK.d/obj/obj/interpose" &&
	printf 'void fi_foreign_take(void);\nvoid fi_lt_back(void) { }\nvoid fi_lt_t(void) { fi_foreign_take(); }\n' >"$CHECK.d/t.c" &&
	printf 'void fi_lt_back(void);\nvoid fi_foreign_take(void) { fi_lt_back(); }\n' >"$CHECK.d/f.c" &&
	printf 'void fi_foreign_take(void);\nvoid fi_lt_up(void) { fi_foreign_take(); }\n' >"$CHECK.d/u.c" &&
	${CC:-cc} -c -o "$CHECK.d/obj/obj/trap/trap.c.o" "$CHECK.d/t.c" &&
	${CC:-cc} -c -o "$CHECK.d/obj/obj/interpose/foreign.c.o" "$CHECK.d/f.c" &&
	${CC:-cc} -c -o "$CHECK.d/obj/obj/trap/up.c.o" "$CHECK.d/u.c"
out=$(BUILD="$CHECK.d/obj" python3 "$CHECK" 2>&1)
down=$(grep "^FAIL: layers_calls_point_down:" <<<"$out")
if grep -q "trap/up.c -> .*interpose/foreign.c (fi_foreign_take)" <<<"$down" &&
	! grep -q "trap/trap.c -> " <<<"$down"; then
	echo "PASS: layers_selftest[unlisted_upcall]"
else
	echo "FAIL: layers_selftest[unlisted_upcall]: a call up by a caller not listed was not found (or a listed one was refused): $down"
	rc=1
fi
if grep -q "^FAIL: layers_no_call_cycles_src:.*interpose/foreign.c -> .*trap/trap.c (fi_lt_back)" <<<"$out"; then
	echo "PASS: layers_selftest[upcall_cycle]"
else
	echo "FAIL: layers_selftest[upcall_cycle]: a circle through a listed upcall was not found"
	rc=1
fi
exit $rc
