#!/usr/bin/env python3
"""Start-up cost of the runtime against program size (issue 12).

Usage: bench/startup_scale.py [--sizes 1000,10000,100000] [--cycles N]
                              [--sqlite PATH-TO-FINEIBT-SPEEDTEST1 PATH-TO-REF]

For hello world and for bench/gen_big.py programs of each size (every
function address-taken with one call site through a pointer: about two
sites per function), builds two executables from the same objects with
fineibt-cc: with the runtime (libfineibt.so, FINEIBT_CFI=auto) and with
--fineibt-no-runtime (kCFI as compiled, crt/thunks.S). Both run main from
bench/startup_main.c, which prints Private_Dirty from
/proc/self/smaps_rollup. Each pair is built for both start-up paths:

  ctor    : no DT_PREINIT_ARRAY entry, the common case: the runtime
            starts from the crt hook at the executable's first
            constructor, every module relocated;
  early   : with startup_main.c's preinit_array entry: libfineibt.so
            starts the runtime while the loader relocates it
            (src/load/early.c), before the executable is relocated
            (docs/runtime.md "Before any constructor"; what any program
            with preinit functions or a stock-clang kCFI library at
            start-up gets).

Only the wall time from fork to exit covers both: the early start runs
before the preinit entry, so the time from it to main (init_us, which
startup_main.c still prints) no longer contains the runtime.

Runs are interleaved, CYCLES of each; medians of the per-cycle
differences are reported:

  extra wall  : fork to exit, auto minus no runtime (includes the dynamic
                loader mapping and relocating libfineibt.so)
  sites/s     : sites rewritten / extra wall
  extra flt   : minor page faults, auto minus no runtime (about 15 us each
                on this virtual machine: most of the start-up time)
  rt Ir/site  : instructions of the runtime's start-up (callgrind) per site
  extra PD    : Private_Dirty, auto minus no runtime, against the issue's
                budget: rewritten text + 64 KiB + 8 bytes per site

With --sqlite, the sqlite3 speedtest1 built by scripts/real (fineibt-cc vs
plain clang, tests/e2e/real_sqlite3.sh) is timed doing no work (--help
on /dev/null): wall time only, since its main is not ours.

Cache hit (as root, unless --no-cache; docs/protection.md "The shared
text cache"): `fineibt cached` runs on a directory of /dev/shm, and each
program (ctor path) is run as nobody until it maps its entry; then, in
interleaved cycles of its own (both runs as nobody):

  hit wall    : fork to exit, auto mapped from the cache minus no runtime
  hit anon    : Anonymous KiB (copied pages), the same difference; not
                Private_Dirty, which counts an entry's tmpfs pages while
                one process alone maps them

Not a test: prints numbers (and writes build/bench/scale/startup-scale.csv,
and with gnuplot installed the plot startup-scale.svg / .txt there).
"""
import argparse
import csv
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
OUT = os.path.join(BUILD, "bench", "scale")
FCC = os.path.join(BUILD, "fineibt-cc")
PAGE = 4096

HELLO = r"""
#include <stdio.h>
typedef int (*fn_t)(const char *);
static int say(const char *s) { return puts(s); }
fn_t volatile hook = say;
int gen_big_main(void) { return hook("hello, world") < 0; }
"""


def sh(argv, **kw):
    subprocess.run(argv, check=True, **kw)


PATHS = ("ctor", "early")


def build_pair(name, sources, opt="-O1"):
    """{path: (runtime exe, no-runtime exe)} from @sources, objects compiled
    once: name and name-nort without a preinit entry (ctor), name-pre and
    name-pre-nort with it (early)."""
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    exes = {}
    for path, suf in (("ctor", ""), ("early", "-pre")):
        exes[path] = (os.path.join(d, name + suf), os.path.join(d, name + suf + "-nort"))
    lib = os.path.getmtime(os.path.join(BUILD, "libfineibt.so"))
    if all(os.path.exists(x) and os.path.getmtime(x) > lib
           for pair in exes.values() for x in pair):
        return exes
    objs, procs = [], []
    for src in sources:
        obj = os.path.join(d, os.path.basename(src) + ".o")
        extra = ["-Dmain=gen_big_main"] if os.path.basename(src) == "main.c" else []
        objs.append(obj)
        if os.path.exists(obj) and os.path.getmtime(obj) > os.path.getmtime(src):
            continue    # objects depend on the compiler flags only
        procs.append(subprocess.Popen([FCC, opt] + extra + ["-c", src, "-o", obj]))
        if len(procs) == 2:
            for p in procs:
                if p.wait():
                    sys.exit("compile failed")
            procs = []
    for p in procs:
        if p.wait():
            sys.exit("compile failed")
    for path, defs in (("ctor", ["-DSTARTUP_NO_PREINIT"]), ("early", [])):
        exe, nort = exes[path]
        main = os.path.join(d, "startup_main-%s.o" % path)
        sh([FCC, "-O2"] + defs + ["-c", os.path.join(ROOT, "bench", "startup_main.c"),
                                  "-o", main])
        sh([FCC, "-o", exe, main] + objs)
        sh([FCC, "--fineibt-no-runtime", "-o", nort, main] + objs +
           [os.path.join(ROOT, "crt", "thunks.S")])
    return exes


def gen_program(n):
    d = os.path.join(OUT, "gen%d" % n)
    parts = max(1, n // 5000)
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "main.c")):
        sh([sys.executable, os.path.join(ROOT, "bench", "gen_big.py"), d, str(n), str(parts)])
    srcs = [os.path.join(d, "part_%02d.c" % k) for k in range(parts)]
    return build_pair("gen%d" % n, srcs + [os.path.join(d, "main.c")])


def hello_program():
    d = os.path.join(OUT, "hello")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "hello.c")
    if not os.path.exists(src):
        with open(src, "w") as f:
            f.write(HELLO)
    return build_pair("hello", [src], opt="-O2")


def run_once(argv, env, preexec_fn=None):
    e = dict(os.environ)
    e.update(env)
    f0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    t0 = time.perf_counter_ns()
    r = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, text=True, preexec_fn=preexec_fn)
    wall = (time.perf_counter_ns() - t0) / 1e3
    kv = dict(re.findall(r"(\w+)=([\d.]+)", r.stdout))
    kv["minflt"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - f0
    return wall, kv, r


def sites_of(exe):
    _, _, r = run_once([exe], {"FINEIBT_CFI": "auto", "FINEIBT_VERBOSE": "1"})
    pre = sum(int(x) for x in re.findall(r"(\d+) preambles", r.stderr))
    cs = sum(int(x) for x in re.findall(r"(\d+) call sites", r.stderr))
    return pre + cs


def text_bytes(exe):
    """Page-rounded size of the executable segments (what gets rewritten)."""
    out = subprocess.run(["readelf", "-lW", exe], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    total = 0
    for m in re.finditer(r"^\s+LOAD\s+\S+\s+(0x[0-9a-f]+)\s+\S+\s+\S+\s+(0x[0-9a-f]+)\s+(R E|RWE)",
                         out, re.M):
        va, sz = int(m.group(1), 16), int(m.group(2), 16)
        lo, hi = va // PAGE * PAGE, (va + sz + PAGE - 1) // PAGE * PAGE
        total += hi - lo
    return total


def measure(exe, nort, cycles):
    xwall, xinit, xpd, init, xflt = [], [], [], [], []
    for c in range(cycles):
        pair = [(nort, {}), (exe, {"FINEIBT_CFI": "auto"})]
        if c % 2:
            pair.reverse()
        res = {}
        for argv0, env in pair:
            res[argv0] = run_once([argv0], env)
        (wb, kb, _), (wa, ka, _) = res[nort], res[exe]
        xwall.append(wa - wb)
        if "init_us" in ka and "init_us" in kb:
            xinit.append(float(ka["init_us"]) - float(kb["init_us"]))
            init.append(float(ka["init_us"]))
        xpd.append(int(ka["private_dirty_kb"]) - int(kb["private_dirty_kb"]))
        xflt.append(ka["minflt"] - kb["minflt"])
    nan = float("nan")
    return {"xwall": statistics.median(xwall),
            "xinit": statistics.median(xinit) if xinit else nan,
            "init": statistics.median(init) if init else nan,
            "xpd": statistics.median(xpd),
            "xflt": statistics.median(xflt)}


NOBODY = 65534


def drop():
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


class Cache:
    """fineibt cached on a directory of /dev/shm, for the hit column."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="fineibt-scale.", dir="/dev/shm")
        os.chmod(self.dir, 0o711)
        self.svc = subprocess.Popen([os.path.join(BUILD, "fineibt"), "cached",
                                     "--dir", self.dir, "--max-size", "2G"],
                                    stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(os.path.join(self.dir, "sock")):
                break
            time.sleep(0.05)

    def env(self):
        return {"FINEIBT_CFI": "auto", "FINEIBT_CACHE": self.dir}

    def warm(self, exe):
        """Run @exe as nobody until it maps its entry."""
        e = dict(os.environ, FINEIBT_CFI="auto,debug", FINEIBT_CACHE=self.dir)
        for _ in range(80):
            r = subprocess.run([exe], env=e, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL, preexec_fn=drop)
            if "mapped from the cache" in r.stderr:
                return True
            time.sleep(0.25)
        return False

    def close(self):
        self.svc.terminate()
        self.svc.wait()
        subprocess.run(["chattr", "-R", "-i", self.dir], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def measure_hit(exe, nort, cycles, cache):
    """Cache hit minus no runtime, both as nobody, interleaved."""
    if not cache.warm(exe):
        return None
    xwall, xanon = [], []
    for c in range(cycles):
        pair = [(nort, {}), (exe, cache.env())]
        if c % 2:
            pair.reverse()
        res = {}
        for argv0, env in pair:
            res[argv0] = run_once([argv0], env, preexec_fn=drop)
        (wb, kb, _), (wa, ka, _) = res[nort], res[exe]
        xwall.append(wa - wb)
        xanon.append(int(ka.get("anon_kb", 0)) - int(kb.get("anon_kb", 0)))
    return {"xwall": statistics.median(xwall), "xanon": statistics.median(xanon)}


def runtime_ir(exe, args=()):
    """Instructions of the runtime's start-up (fineibt_rt_hook, inclusive),
    from callgrind; valgrind 3.19 cannot read clang-22's DWARF 5, so it
    runs copies without debug info (libfineibt.so via LD_LIBRARY_PATH)."""
    if not shutil.which("valgrind"):
        return None
    d = os.path.join(OUT, "vg")
    os.makedirs(d, exist_ok=True)
    lib = os.path.join(d, "libfineibt.so.0")
    sh(["strip", "-g", "-o", lib, os.path.join(BUILD, "libfineibt.so")])
    copy = os.path.join(d, os.path.basename(exe))
    sh(["strip", "-g", "-o", copy, exe])
    out = os.path.join(d, "cg.out")
    e = dict(os.environ, FINEIBT_CFI="auto", LD_LIBRARY_PATH=d)
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                    copy] + list(args), env=e, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out],
                         stdout=subprocess.PIPE, text=True).stdout
    m = re.search(r"^\s*([\d,]+) .*fineibt_rt_hook ", ann, re.M)
    return int(m.group(1).replace(",", "")) if m else None


def measure_sqlite(fi, ref, cycles):
    xs, rt = [], []
    for c in range(cycles):
        order = [(ref, {}), (fi, {"FINEIBT_CFI": "auto", "FINEIBT_VERBOSE": "1"})]
        if c % 2:
            order.reverse()
        w = {}
        for exe, env in order:
            wall, _, r = run_once([exe, "--help"], env)
            w[exe] = wall
            m = re.search(r"runtime started in (\d+) us", r.stderr)
            if m:
                rt.append(int(m.group(1)))
        xs.append(w[fi] - w[ref])
    return statistics.median(xs), statistics.median(rt) if rt else float("nan")


def sites_of_sqlite(exe):
    _, _, r = run_once([exe, "--help"], {"FINEIBT_CFI": "auto", "FINEIBT_VERBOSE": "1"})
    return sum(int(x) for x in re.findall(r"(\d+) (?:preambles|call sites)", r.stderr))


def plot(rows):
    """The scaling plot, when gnuplot is installed: runtime instructions
    (callgrind) and extra Private_Dirty against sites, log-log, with the
    issue's memory budget; SVG and a text version (docs/bench.md)."""
    gp = shutil.which("gnuplot")
    pts = [r for r in rows if r[0] != "speedtest1" and r[7]]
    if not gp or len(pts) < 4:
        print("(no plot: %s)" % ("gnuplot not installed" if not gp else "too few points"))
        return
    data = {}
    for path in PATHS:
        data[path] = os.path.join(OUT, "startup-scale-%s.dat" % path)
        with open(data[path], "w") as f:
            for r in pts:
                if r[1] == path:
                    f.write("%d %d %d %s %s\n" % (r[2], r[7], r[8], r[9],
                                                 r[11] if r[11] != "" else "NaN"))
    common = (
        "set multiplot layout 2,1; set logscale xy; set key top left; set grid;"
        "set xlabel 'sites rewritten';"
        "set ylabel 'instructions';"
        "plot '%(c)s' using 1:2 with linespoints title 'runtime start-up Ir, ctor path',"
        " '%(e)s' using 1:2 with linespoints title 'early path (preinit)';"
        "set ylabel 'KiB';"
        "plot '%(c)s' using 1:3 with linespoints title 'extra Private_Dirty, ctor path',"
        " '%(e)s' using 1:3 with linespoints title 'early path',"
        " '%(c)s' using 1:4 with lines dashtype 2 title 'budget: text + 64 KiB + 8 B/site',"
        " '%(c)s' using 1:5 with linespoints title 'cache hit: extra anonymous';"
        "unset multiplot" % {"c": data["ctor"], "e": data["early"]})
    for term, out in (("svg size 800,700", "startup-scale.svg"),
                      ("dumb size 79,44", "startup-scale.txt")):
        sh([gp, "-e", "set terminal %s; set output '%s'; %s"
            % (term, os.path.join(OUT, out), common)])
    print("plot: %s (and .svg)" % os.path.join(OUT, "startup-scale.txt"))


def report_row(name, path, pair, cycles, cache=None):
    """Measure one program on one start-up path; print its line, return
    its CSV row."""
    exe, nort = pair
    n = sites_of(exe)
    text = text_bytes(exe)
    m = measure(exe, nort, cycles)
    budget = (text + 64 * 1024 + 8 * n) / 1024
    x = m["xwall"]
    rate = n / (x / 1e6) / 1e6 if x > 0 else float("inf")
    ok = "yes" if m["xpd"] <= budget else "NO"
    ir = runtime_ir(exe)
    hit = measure_hit(exe, nort, cycles, cache) if cache and path == "ctor" else None
    print("%-12s %-6s %8d %9.0f %13.3f %10.2f %10.0f %10s %12.0f %11.0f %-9s %12s %12s" % (
        name, path, n, text / 1024, m["xwall"] / 1e3, rate,
        m["xflt"], "%.0f" % (ir / n) if ir else "-", m["xpd"], budget, ok,
        "%.3f" % (hit["xwall"] / 1e3) if hit else "-",
        "%.0f" % hit["xanon"] if hit else "-"))
    return [name, path, n, text, "%.3f" % (m["xwall"] / 1e3), "%.2f" % rate, m["xflt"], ir or "", m["xpd"], "%.0f" % budget,
            "%.3f" % (hit["xwall"] / 1e3) if hit else "", "%.0f" % hit["xanon"] if hit else ""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--cycles", type=int, default=31)
    ap.add_argument("--sqlite", nargs=2, metavar=("FINEIBT", "REF"))
    ap.add_argument("--no-cache", action="store_true",
                    help="no cache-hit columns (they need root)")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    progs = [("hello", hello_program())]
    for n in [int(x) for x in a.sizes.split(",") if x]:
        progs.append(("gen%d" % n, gen_program(n)))
    # A file just written by the linker sits in dirty page-cache pages,
    # which smaps counts as Private_Dirty of every private mapping of it
    # until written back: that hid half of the 100k program's text copy.
    os.sync()
    rows = []
    print("Start-up, FINEIBT_CFI=auto vs the same objects without the runtime;")
    print("medians over %d interleaved cycles (extra = auto - no runtime)" % a.cycles)
    print("path ctor: no preinit entry, the runtime starts at the first constructor;")
    print("path early: a DT_PREINIT_ARRAY entry, the runtime starts while ld.so")
    print("relocates libfineibt.so (docs/runtime.md \"Before any constructor\")")
    hdr = "%-12s %-6s %8s %9s %13s %10s %10s %10s %12s %11s %-9s %12s %12s" % (
        "program", "path", "sites", "text KiB", "extra wall ms",
        "M sites/s", "extra flt", "rt Ir/site", "extra PD KiB", "budget KiB",
        "PD within", "hit wall ms", "hit anon KiB")
    cache = None
    if not a.no_cache and os.geteuid() == 0:
        cache = Cache()
        print("cache hit: the ctor path as nobody, the entry mapped from "
              "fineibt cached (hit columns: extra over no runtime)")
    print(hdr)
    print("-" * len(hdr))
    try:
        for name, exes in progs:
            for path in PATHS:
                rows.append(report_row(name, path, exes[path], a.cycles, cache))
    finally:
        if cache:
            cache.close()
    if a.sqlite:
        x, rt = measure_sqlite(a.sqlite[0], a.sqlite[1], a.cycles)
        n = sites_of_sqlite(a.sqlite[0])
        ir = runtime_ir(a.sqlite[0], ["--help"])
        print("%-12s extra wall %.3f ms vs plain clang; runtime's own time %.0f us;"
              " %d sites; runtime %s Ir (%s Ir/site)"
              % ("speedtest1", x / 1e3, rt, n, ir, "%.0f" % (ir / n) if ir and n else "-"))
        rows.append(["speedtest1", "ctor", n, "", "%.3f" % (x / 1e3), "",
                     "", ir or "", "", "", "", ""])
    with open(os.path.join(OUT, "startup-scale.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["program", "path", "sites", "text_bytes", "extra_wall_ms",
                    "msites_per_s", "extra_minflt",
                    "runtime_ir", "extra_private_dirty_kb", "budget_kb",
                    "hit_extra_wall_ms", "hit_extra_anon_kb"])
        w.writerows(rows)
    plot(rows)


if __name__ == "__main__":
    main()
