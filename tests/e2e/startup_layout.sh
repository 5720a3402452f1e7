#!/usr/bin/env bash
# startup_layout: libfineibt.so lays what a start-up touches together, as
# src/libfineibt.order lists it (Makefile, fi_so_link; docs/bench.md,
# "What a start touches"):
#  - the listed functions are the front of .text: every one lies below
#    every function not listed (an alias at a listed address aside)
#  - the listed .bss variables are the front of .bss, before the state
#    (fi_rt_area) and every variable not listed; those under a page lie
#    on as few pages as their sizes need
#  - every section the list names is one the objects have (a function
#    renamed or removed: scripts/startup_order.sh writes the list anew)
set -u
cd "${FINEIBT_ROOT:-.}"
BUILD=${BUILD:-build}
export BUILD
python3 - <<'EOF'
import glob, os, re, subprocess, sys

BUILD = os.environ["BUILD"]
LIB = os.path.join(BUILD, "libfineibt.so")
PAGE = 4096
rc = 0


def check(name, ok, why):
    global rc
    if ok:
        print("PASS: startup_layout_%s" % name)
    else:
        print("FAIL: startup_layout_%s: %s" % (name, why))
        rc = 1


lines = [l.strip() for l in open("src/libfineibt.order")
         if l.strip() and not l.startswith("#")]
text = {l[len(".text."):] for l in lines if l.startswith(".text.")}
# ARCHIVE:MEMBER .text: the member's functions (libc_nonshared.a's).
members = [l.split()[0] for l in lines if l.endswith(" .text") and ":" in l]
bss = [l[len(".bss."):] for l in lines if l.startswith(".bss.")]

syms = []
for l in subprocess.run(["nm", "-nS", LIB], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    p = l.split()
    if len(p) == 4:
        syms.append((int(p[0], 16), int(p[1], 16), p[2], p[3]))

mem_funcs = set()
for m in members:
    ar, obj = m.split(":", 1)
    path = subprocess.run(["clang-22", "-print-file-name=" + ar], capture_output=True,
                          text=True).stdout.strip()
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True,
                         text=True).stdout
    cur = None
    for l in out.splitlines():
        if l.endswith(":"):
            cur = l[:-1]
        elif cur == obj and len(l.split()) == 3 and l.split()[1] in "TtWw":
            mem_funcs.add(l.split()[2])

# Text: the listed functions below every other one.
funcs = [(a, s, n) for a, s, t, n in syms if t in "tTwW" and s]
listed = [(a, s, n) for a, s, n in funcs if n in text or n in mem_funcs]
at = {a for a, _, _ in listed}
others = [(a, n) for a, s, n in funcs if a not in at and n not in text]
top = max((a + s, n) for a, s, n in listed) if listed else (0, "")
low = min(others) if others else (1 << 64, "")
check("text_front", len(listed) >= len(text) // 2 and top[0] <= low[0],
      "%d of %d listed functions in %s; the last listed ends at %#x (%s), "
      "the first other starts at %#x (%s)" %
      (len(listed), len(text), LIB, top[0], top[1], low[0], low[1]))

# .bss: the listed variables first, the small ones on as few pages as
# they need.
vars_ = {n: (a, s) for a, s, t, n in syms if t in "bB"}
present = [n for n in bss if n in vars_]
area = vars_.get("fi_rt_area", (0, 0))[0]
not_listed = [a for n, (a, s) in vars_.items() if n not in bss and s]
end = max(vars_[n][0] for n in present) if present else 0
check("bss_front", present and end < area and end < min(not_listed),
      "listed .bss variables end at %#x; the state at %#x, the first other at %#x"
      % (end, area, min(not_listed)))
small = [vars_[n] for n in present if vars_[n][1] < PAGE]
pages = {p for a, s in small for p in range(a // PAGE, (a + s - 1) // PAGE + 1)}
need = -(-sum(s for _, s in small) // PAGE)
check("bss_small_pages", small and len(pages) <= need,
      "%d variables under a page, %d bytes, lie on %d pages (%d needed)"
      % (len(small), sum(s for _, s in small), len(pages), need))

# The list names sections the objects have.
have = set()
for o in glob.glob(os.path.join(BUILD, "obj", "*", "*.c.o")):
    out = subprocess.run(["readelf", "-SW", o], capture_output=True, text=True).stdout
    have.update(re.findall(r" (\.(?:text|bss)\.\S+) ", out))
stale = [l for l in lines if l.startswith((".text.", ".bss.")) and l not in have]
stale += [m for m in members if not mem_funcs]
check("list_current", not stale,
      "src/libfineibt.order names %d sections no object has (%s): run "
      "scripts/startup_order.sh" % (len(stale), " ".join(stale[:5])))
sys.exit(rc)
EOF
