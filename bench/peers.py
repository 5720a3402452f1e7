#!/usr/bin/env python3
"""make bench (peers part): the cost per indirect call of every fineibt
mode beside its peers, measured in the same run.

Usage: bench/peers.py [--cycles N] [--sizes 4096,16384] [--no-callgrind]
                      [--no-build]
Env: BUILD (build dir, default build).

Variants (bench/bench.mk, one build directory per callee count under
$BUILD/bench/peers-nfN): plain clang-22 -O2, plain -flto, clang CFI-icall
(-flto -fvisibility=hidden -fsanitize=cfi-icall, generalized pointers,
trap mode), kCFI as compiled (fineibt-cc --fineibt-no-runtime), and
fineibt-cc's program in every FINEIBT_CFI mode.

Loops (bench/calls.c): hot (one callee), cold chained (every call takes
the previous result: NFUNCS callees 256 bytes apart, shuffled), and
independent (the same targets, precomputed in the same random order
outside the timed loop, no chain between the calls). One process per
variant and size, interleaved (each cycle starts one variant later),
pinned to one CPU; per process the fastest of its repetitions, then the
median over cycles with the min-max spread, and the median of the
per-cycle ratios to plain -O2. Instructions per call come from callgrind
(deterministic). Writes $BUILD/bench/peers.csv. Never asserts on time.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
BDIR = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
MODES = ["off", "kcfi", "fineibt", "fineibt,paranoid", "fineibt,bhi",
         "fineibt,paranoid,bhi", "auto"]
LOOPS = ("hot", "cold", "indep")


def say(msg=""):
    print(msg, flush=True)


def bdir(nf):
    return os.path.join(BDIR, "bench", "peers-nf%d" % nf)


def variants(nf):
    """(name, argv, env): the peers, then every mode."""
    b = bdir(nf)
    v = [("clang -O2", [os.path.join(b, "calls-nocfi")], {}),
         ("clang -flto", [os.path.join(b, "calls-lto")], {}),
         ("clang CFI-icall", [os.path.join(b, "calls-cfi-icall")], {}),
         ("kCFI as compiled", [os.path.join(b, "calls-cc-nort")], {})]
    for m in MODES:
        v.append(("fineibt " + m, [os.path.join(b, "calls-cc")],
                  {"FINEIBT_CFI": m}))
    return v


def build(nf):
    cmd = ["make", "--no-print-directory", "-f", "bench/bench.mk",
           "BUILD=" + BUILD, "B=" + bdir(nf), "NFUNCS=%d" % nf, "-j2",
           bdir(nf) + "/calls-nocfi", bdir(nf) + "/calls-lto",
           bdir(nf) + "/calls-cfi-icall", bdir(nf) + "/calls-cc-nort",
           bdir(nf) + "/calls-cc"]
    os.makedirs(bdir(nf), exist_ok=True)
    log = os.path.join(bdir(nf), "build.log")
    with open(log, "w") as f:
        r = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        say("peers: build failed, see %s" % log)
        sys.exit(1)


def run(argv, env):
    e = dict(os.environ)
    e.pop("FINEIBT_VERBOSE", None)
    e.update(env)
    r = subprocess.run(argv, env=e, capture_output=True, text=True)
    if r.returncode:
        say("peers: %s (%s) failed with status %d: %s" % (
            " ".join(argv), env, r.returncode, r.stderr.strip()))
        sys.exit(1)
    return dict(re.findall(r"(\w+)=(\S+)", r.stdout))


def cycles(n, sizes, cpu, reps):
    rows = []
    jobs = [(nf, v) for nf in sizes for v in variants(nf)]
    for c in range(n):
        k = c % len(jobs)
        for nf, (name, argv, env) in jobs[k:] + jobs[:k]:
            kv = run(argv + ["-p", str(cpu), "-r", str(reps), "-H", "262144",
                             "-C", str(16 * nf)], env)
            rows.append({"cycle": c, "nfuncs": nf, "variant": name,
                         "hot": float(kv["hot_min"]),
                         "cold": float(kv["cold_min"]),
                         "indep": float(kv["indep_min"])})
        say("  peers: cycle %d/%d" % (c + 1, n))
    return rows


def callgrind(nf):
    """Instructions per call of each loop (warm-up + one repetition)."""
    vg = shutil.which("valgrind")
    if not vg:
        return {}
    # valgrind cannot read clang-22's DWARF 5: a copy without debug info.
    vgdir = os.path.join(bdir(nf), "vg")
    os.makedirs(vgdir, exist_ok=True)
    so = os.path.join(vgdir, "libfineibt.so.0")
    strip = shutil.which("llvm-objcopy-22") or "objcopy"
    subprocess.run([strip, "--strip-debug",
                    os.path.join(BDIR, "libfineibt.so"), so], check=True)
    out = {}
    n = 4096
    for name, argv, env in variants(nf):
        res = {}
        for loop in LOOPS:
            cg = os.path.join(vgdir, "cg.out")
            e = dict(env)
            e["LD_LIBRARY_PATH"] = vgdir
            run([vg, "--tool=callgrind", "--toggle-collect=bench_" + loop + "*",
                 "--callgrind-out-file=" + cg] + argv +
                ["-r", "1", "-H", str(n), "-C", str(n)], e)
            with open(cg) as f:
                text = f.read()
            tot = re.search(r"^totals: (\d+)", text, re.M)
            res[loop] = int(tot.group(1)) / (2 * n) if tot else float("nan")
        out[name] = res
    return out


def spread(v):
    return "%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v))


def report(rows, sizes, cg):
    table = []
    for nf in sizes:
        names = [v[0] for v in variants(nf)]
        say()
        say("Per call, %d callees (%d KiB of text): ns, fastest repetition"
            " per process, median [min-max] over cycles; x = median of the"
            " per-cycle ratio to clang -O2; Ir = instructions per call"
            " (callgrind)" % (nf, nf * 256 // 1024))
        hdr = "%-26s" % "variant"
        for loop in LOOPS:
            hdr += " | %-22s %6s %6s" % (loop + " ns", "x", "Ir")
        say(hdr)
        for name in names:
            line = "%-26s" % name
            row = {"nfuncs": nf, "variant": name}
            for loop in LOOPS:
                mine = {r["cycle"]: r[loop] for r in rows
                        if r["nfuncs"] == nf and r["variant"] == name}
                base = {r["cycle"]: r[loop] for r in rows
                        if r["nfuncs"] == nf and r["variant"] == "clang -O2"}
                ratio = [mine[c] / base[c] for c in mine if base.get(c)]
                ir = cg.get(nf, {}).get(name, {}).get(loop, float("nan"))
                line += " | %-22s %6.3f %6.1f" % (
                    spread(list(mine.values())), statistics.median(ratio), ir)
                row[loop + "_ns"] = "%.3f" % statistics.median(mine.values())
                row[loop + "_ns_min"] = "%.3f" % min(mine.values())
                row[loop + "_ns_max"] = "%.3f" % max(mine.values())
                row[loop + "_x_plain"] = "%.4f" % statistics.median(ratio)
                row[loop + "_ir"] = "%.1f" % ir
            say(line)
            table.append(row)
        # The target: auto never slower per call than kcfi.
        for loop in LOOPS:
            a = [r[loop] for r in rows if r["nfuncs"] == nf and r["variant"] == "fineibt auto"]
            k = [r[loop] for r in rows if r["nfuncs"] == nf and r["variant"] == "fineibt kcfi"]
            say("  auto/kcfi %-5s: %.3f (median of %d cycles)" % (
                loop, statistics.median(x / y for x, y in zip(a, k)), len(a)))
    path = os.path.join(BDIR, "bench", "peers.csv")
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)
    os.replace(path + ".tmp", path)
    say("wrote %s" % path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=15)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--sizes", default="4096,16384")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    cpu = os.sched_getaffinity(0)
    cpu = max(cpu)
    for nf in sizes:
        if not a.no_build:
            say("peers: building %d callees ..." % nf)
            build(nf)
    cg = {}
    if not a.no_callgrind:
        for nf in sizes:
            say("peers: callgrind, %d callees ..." % nf)
            cg[nf] = callgrind(nf)
    say("peers: %d cycles x %d processes, pinned to CPU %d" % (
        a.cycles, len(sizes) * len(variants(sizes[0])), cpu))
    rows = cycles(a.cycles, sizes, cpu, a.reps)
    report(rows, sizes, cg)


if __name__ == "__main__":
    main()
