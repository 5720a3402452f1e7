#!/usr/bin/env python3
"""Start-up from the shared text cache (docs/protection.md "The shared
text cache", docs/bench.md "Start-up from the shared text cache").

Usage: bench/cache_startup.py [--rounds N] [--programs hello,sqlite,bash,gen8000,libhello,libgen8000]
Env: BUILD (default build), FINEIBT_SRC_CACHE (Debian sources,
default /var/cache/fineibt-src).

Each program is built by plain clang-22 and by fineibt-cc (under
$BUILD/bench/cache/) and run as nobody, four variants:

  plain    the clang-22 build
  norand   fineibt-cc build, FINEIBT_CFI=kcfi,norand: nothing rewritten
  private  fineibt-cc build, auto, FINEIBT_CACHE=off: rewritten privately
  hit      fineibt-cc build, auto, the cache's entry mapped

with `fineibt cached` running on a directory of /dev/shm (filled by a
first run). Reported per variant:

  wall     fork to exit, pinned to one CPU, variants interleaved, N rounds:
           median, q1-q3, and the median of per-round differences to plain
  flt      minor faults (median)
  sys      system calls (strace -f -c, exact)
  Ir       instructions (callgrind; under valgrind /proc/self/exe is
           valgrind's own, so an executable never hits: its hit column is
           empty; libhello, a plain executable calling a fineibt-cc
           library, shows a library's hit)
  anon     anonymous KiB at exit (bench/asuser.c mem: copied pages)
  pss10    ten processes at once, total Pss KiB at their exit

Programs: hello; sqlite's speedtest1 --help (sqlite3.c generated from the
Debian source with tclsh: 240 text pages); bash -c : (GNU bash from its
Debian source, scripts/real/fetch.sh bash); the bench/gen_big.py program
of 8,000 functions, and the same as a fineibt-cc library under a plain
executable (libgen8000, whose hit callgrind counts). A program whose
source is missing is skipped.

Needs root (it runs the service and drops to nobody for the programs);
prints a line and exits 0 otherwise. Not a test: prints numbers and
writes $BUILD/bench/cache-startup.csv.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
BDIR = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
OUT = os.path.join(BDIR, "bench", "cache")
FCC = os.path.join(BDIR, "fineibt-cc")
FIBT = os.path.join(BDIR, "fineibt")
SRC = os.environ.get("FINEIBT_SRC_CACHE", "/var/cache/fineibt-src")
NOBODY = 65534
VARIANTS = ("plain", "norand", "private", "hit")

HELLO = '#include <stdio.h>\nint main(void) { printf("hello, world\\n"); return 0; }\n'
LIBHELLO = '#include <stdio.h>\nint hello(void) { return printf("hello, world\\n"); }\n'
LIBMAIN = 'int hello(void);\nint main(void) { return hello() < 0; }\n'


def sh(argv, **kw):
    subprocess.run(argv, check=True, **kw)


def newer(out, *deps):
    return os.path.exists(out) and all(os.path.getmtime(out) > os.path.getmtime(d)
                                       for d in deps if os.path.exists(d))


def write(path, text):
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as f:
            f.write(text)


def build_hello():
    d = os.path.join(OUT, "hello")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "hello.c")
    write(src, HELLO)
    fi, pl = os.path.join(d, "hello_fi"), os.path.join(d, "hello_plain")
    if not newer(fi, src, FCC):
        sh([FCC, "-O2", "-o", fi, src])
    if not newer(pl, src):
        sh(["clang-22", "-O2", "-o", pl, src])
    return fi, pl, []


def build_libhello():
    d = os.path.join(OUT, "libhello")
    os.makedirs(d, exist_ok=True)
    lib, main = os.path.join(d, "lib.c"), os.path.join(d, "main.c")
    write(lib, LIBHELLO)
    write(main, LIBMAIN)
    so = os.path.join(d, "fi", "libh.so")
    so_pl = os.path.join(d, "plain", "libh.so")
    for path, cc in ((so, [FCC]), (so_pl, ["clang-22"])):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not newer(path, lib, FCC):
            sh(cc + ["-O2", "-fPIC", "-shared", "-o", path, lib])
    exes = []
    for kind in ("fi", "plain"):
        exe = os.path.join(d, kind, "main")
        if not newer(exe, main, os.path.join(d, kind, "libh.so")):
            sh(["clang-22", "-O2", "-o", exe, main, "-L" + os.path.join(d, kind),
                "-lh", "-Wl,-rpath," + os.path.join(d, kind)])
        exes.append(exe)
    return exes[0], exes[1], []


def build_sqlite():
    src = os.path.join(SRC, "sqlite3", "src")
    if not os.path.isdir(src) or not shutil.which("tclsh"):
        return None
    d = os.path.join(OUT, "sqlite")
    tree = os.path.join(d, "src")
    amal = os.path.join(tree, "sqlite3.c")
    if not os.path.exists(amal):
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(src, tree, symlinks=True)
        sh(["./configure", "--disable-tcl", "--disable-shared", "--disable-readline"],
           cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sh(["make", "sqlite3.c"], cwd=tree, stdout=subprocess.DEVNULL,
           stderr=subprocess.DEVNULL)
    args = ["-O2", "-I" + tree, os.path.join(tree, "test", "speedtest1.c"), amal,
            "-lm", "-lpthread"]
    fi, pl = os.path.join(d, "speedtest1_fi"), os.path.join(d, "speedtest1_plain")
    if not newer(fi, amal, FCC):
        sh([FCC, "-o", fi] + args)
    if not newer(pl, amal):
        sh(["clang-22", "-o", pl] + args)
    return fi, pl, ["--help"]


def build_bash():
    src = os.path.join(SRC, "bash", "src")
    if not os.path.isdir(src):
        return None
    d = os.path.join(OUT, "bash")
    exes = []
    for kind, cc in (("fi", FCC), ("plain", "clang-22")):
        tree = os.path.join(d, kind)
        exe = os.path.join(tree, "bash")
        if not os.path.exists(exe):
            shutil.rmtree(tree, ignore_errors=True)
            shutil.copytree(src, tree, symlinks=True)
            sh(["./configure", "CC=" + cc, "CFLAGS=-O2", "--without-bash-malloc",
                "--disable-nls"], cwd=tree, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
            sh(["make", "-j%d" % os.cpu_count()], cwd=tree,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        exes.append(exe)
    return exes[0], exes[1], ["-c", ":"]


def build_gen8000():
    d = os.path.join(OUT, "gen8000")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "main.c")):
        sh([sys.executable, os.path.join(ROOT, "bench", "gen_big.py"), d, "8000", "2"])
    srcs = [os.path.join(d, f) for f in ("part_00.c", "part_01.c", "main.c")]
    exes = []
    for kind, cc in (("fi", FCC), ("plain", "clang-22")):
        exe = os.path.join(d, "gen8000_" + kind)
        if not newer(exe, FCC, *srcs):
            objs = []
            for s in srcs:
                o = os.path.join(d, "%s_%s.o" % (kind, os.path.basename(s)))
                sh([cc, "-O1", "-c", s, "-o", o])
                objs.append(o)
            sh([cc, "-o", exe] + objs)
        exes.append(exe)
    return exes[0], exes[1], []


def build_libgen8000():
    """The same 8,000 functions as a fineibt-cc library (its main renamed)
    under a plain executable: under callgrind a library's entry is hit,
    an executable's never (see Ir above)."""
    d = os.path.join(OUT, "libgen8000")
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "main.c")):
        sh([sys.executable, os.path.join(ROOT, "bench", "gen_big.py"), d, "8000", "2"])
    srcs = [os.path.join(d, f) for f in ("part_00.c", "part_01.c", "main.c")]
    caller = os.path.join(d, "caller.c")
    write(caller, "int gen_main(void);\nint main(void) { return gen_main(); }\n")
    exes = []
    for kind, cc in (("fi", FCC), ("plain", "clang-22")):
        so = os.path.join(d, kind, "libgen.so")
        os.makedirs(os.path.dirname(so), exist_ok=True)
        if not newer(so, FCC, *srcs):
            sh([cc, "-O1", "-fPIC", "-shared", "-Dmain=gen_main", "-o", so] + srcs)
        exe = os.path.join(d, kind, "main")
        if not newer(exe, caller, so):
            sh(["clang-22", "-O2", "-o", exe, caller, "-L" + os.path.dirname(so),
                "-lgen", "-Wl,-rpath," + os.path.dirname(so)])
        exes.append(exe)
    return exes[0], exes[1], []


BUILDERS = {"hello": build_hello, "sqlite": build_sqlite, "bash": build_bash,
            "gen8000": build_gen8000, "libhello": build_libhello,
            "libgen8000": build_libgen8000}


def drop():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def env_of(variant, cache):
    e = {k: v for k, v in os.environ.items() if not k.startswith("FINEIBT_")}
    e["FINEIBT_CFI"] = "kcfi,norand" if variant == "norand" else "auto"
    e["FINEIBT_CACHE"] = cache if variant == "hit" else "off"
    return e


def argv_of(variant, prog):
    fi, pl, args = prog
    return [pl if variant == "plain" else fi] + args


def asuser():
    tool = os.path.join(OUT, "asuser")
    src = os.path.join(ROOT, "bench", "asuser.c")
    if not newer(tool, src):
        sh(["cc", "-O2", "-o", tool, src])
    return tool


def run_once(argv, env):
    """Fork to exit of one run as nobody, and its minor faults (measured
    by bench/asuser.c, not through Python's fork)."""
    r = subprocess.run([asuser(), "time", str(NOBODY)] + argv, env=env,
                       stdout=subprocess.PIPE, text=True)
    wall, flt = r.stdout.split()
    return float(wall), int(flt)


def syscalls(argv, env):
    if not shutil.which("strace"):
        return None
    r = subprocess.run(["strace", "-f", "-c", "-u", "nobody"] + argv, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    m = re.search(r"^\s*100\.00\s+\S+\s+\S+\s+(\d+)\s+(?:\d+\s+)?total$", r.stderr, re.M)
    return int(m.group(1)) if m else None


def callgrind(argv, env):
    if not shutil.which("valgrind"):
        return None
    out = tempfile.mktemp(prefix="cg.", dir="/tmp")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv,
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, preexec_fn=drop)
    try:
        os.unlink(out)
    except OSError:
        pass
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if m else None


def exitmem(n, argv, env):
    r = subprocess.run([asuser(), "mem", str(n), str(NOBODY)] + argv, env=env,
                       stdout=subprocess.PIPE, text=True)
    m = re.search(r"^total rss (\d+) pss (\d+) private_dirty (\d+) anonymous (\d+)",
                  r.stdout, re.M)
    return (int(m.group(2)), int(m.group(4))) if m else (None, None)


def hits(prog, cache):
    """Run until the fineibt build maps its entries (the service fills
    them from the first runs' requests)."""
    argv, env = argv_of("hit", prog), env_of("hit", cache)
    env = dict(env, FINEIBT_CFI="auto,debug")
    for _ in range(40):
        r = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, preexec_fn=drop)
        if "mapped from the cache" in r.stderr and "rewritten privately" not in r.stderr:
            return True
        time.sleep(0.25)
    return False


def q(v, p):
    s = sorted(v)
    return s[min(len(s) - 1, int(p * len(s)))]


def measure(name, prog, cache, rounds):
    walls = {v: [] for v in VARIANTS}
    flts = {v: [] for v in VARIANTS}
    for r in range(rounds):
        order = VARIANTS[r % 4:] + VARIANTS[:r % 4]
        for v in order:
            w, f = run_once(argv_of(v, prog), env_of(v, cache))
            walls[v].append(w)
            flts[v].append(f)
    rows = []
    for v in VARIANTS:
        d = [a - b for a, b in zip(walls[v], walls["plain"])]
        sysc = syscalls(argv_of(v, prog), env_of(v, cache))
        ir = None if v == "hit" and not name.startswith("lib") else \
            callgrind(argv_of(v, prog), env_of(v, cache))
        _, anon = exitmem(1, argv_of(v, prog), env_of(v, cache))
        pss10, _ = exitmem(10, argv_of(v, prog), env_of(v, cache))
        rows.append({"program": name, "variant": v,
                     "wall_us": statistics.median(walls[v]),
                     "q1_us": q(walls[v], 0.25), "q3_us": q(walls[v], 0.75),
                     "extra_us": statistics.median(d) if v != "plain" else 0.0,
                     "minflt": statistics.median(flts[v]), "syscalls": sysc,
                     "ir": ir, "anon_kb": anon, "pss10_kb": pss10})
    return rows


def fmt(v, f="%d"):
    return "-" if v is None else f % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=31)
    ap.add_argument("--programs", default="hello,libhello,sqlite,bash,gen8000,libgen8000")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("cache start-up: skipped (needs root: it runs fineibt cached "
              "and the programs as nobody)")
        return 0
    os.makedirs(OUT, exist_ok=True)
    os.chmod(OUT, 0o755)
    progs = []
    for name in a.programs.split(","):
        p = BUILDERS[name]()
        if p:
            progs.append((name, p))
        else:
            print("cache start-up: %s skipped (source not in %s)" % (name, SRC))
    cache = tempfile.mkdtemp(prefix="fineibt-bench.", dir="/dev/shm")
    os.chmod(cache, 0o711)
    svc = subprocess.Popen([FIBT, "cached", "--dir", cache], stderr=subprocess.DEVNULL)
    rows = []
    try:
        for _ in range(100):
            if os.path.exists(os.path.join(cache, "sock")):
                break
            time.sleep(0.05)
        cpu = max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        load = os.getloadavg()[0]
        for name, p in progs:
            if not hits(p, cache):
                print("cache start-up: %s: no hit after 40 runs; skipped" % name)
                continue
            rows += measure(name, p, cache, a.rounds)
    finally:
        svc.terminate()
        svc.wait()
        subprocess.run(["chattr", "-R", "-i", cache], stderr=subprocess.DEVNULL)
        shutil.rmtree(cache, ignore_errors=True)
    print("Start-up from the shared text cache: as nobody, pinned to CPU %d, "
          "%d interleaved rounds, load average %.1f at the start" % (cpu, a.rounds, load))
    hdr = "%-9s %-8s %9s %17s %9s %6s %5s %9s %7s %8s" % (
        "program", "variant", "wall us", "q1-q3 us", "extra us", "flt", "sys",
        "Ir", "anon KB", "Pss10 KB")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print("%-9s %-8s %9.0f %8.0f-%-8.0f %9s %6.0f %5s %9s %7s %8s" % (
            r["program"], r["variant"], r["wall_us"], r["q1_us"], r["q3_us"],
            "-" if r["variant"] == "plain" else "%+.0f" % r["extra_us"],
            r["minflt"], fmt(r["syscalls"]), fmt(r["ir"]), fmt(r["anon_kb"]),
            fmt(r["pss10_kb"])))
    path = os.path.join(os.path.dirname(OUT), "cache-startup.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["program"])
        w.writeheader()
        w.writerows(rows)
    print("CSV: %s" % os.path.relpath(path, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
