#!/usr/bin/env python3
"""Whole programs against their peers (issue 13): `make bench-real`.

For each real program of scripts/real (default: all of check-real), every
variant is built by scripts/real/run.sh and measured twice:

- instructions: callgrind, children traced (`run.sh --icount`), on the
  program's ICOUNT workload; deterministic, the number to trust on a shared
  machine;
- wall time: the same workload, pinned to one CPU (taskset), niced,
  REPS interleaved rounds (each round runs every variant once, in a
  rotated order), so that load from others spreads over all variants
  alike. Reported: the median of each variant, its spread (the
  interquartile range over the median) and the median over rounds of the
  per-round ratio to plain -O2.

Variants: plain clang-22 -O2 (the reference, `ref`), plain -flto,
clang's CFI-icall (LTO, trap mode), kCFI as compiled (scripts/real/
standin-cc without veneers: no runtime) and fineibt-cc in every FINEIBT_CFI
mode. Output: $BUILD/bench/real.csv, $BUILD/bench/real.md (the tables of
docs/bench.md's "Against the peers"), and with --readme that section.
"""
import argparse
import csv
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
REAL = os.path.join(ROOT, "scripts", "real")
MODES = ["off", "kcfi", "fineibt", "fineibt,paranoid", "fineibt,bhi",
         "fineibt,paranoid,bhi", "auto"]
PEERS = [("clang-lto", "plain -flto"), ("clang-cfi-icall", "CFI-icall (LTO)"),
         ("standin-raw", "kCFI as compiled")]
MODE_LABEL = {"fineibt,paranoid": "paranoid", "fineibt,bhi": "bhi",
              "fineibt,paranoid,bhi": "paranoid+bhi"}
DEFAULT_PROGS = ["bzip2", "lua5.4", "pcre2", "sqlite3", "ed", "gawk",
                 "faketime"]
README_BEGIN = "<!-- bench-real:begin (make bench-real REAL_ARGS=--readme) -->"
README_END = "<!-- bench-real:end -->"
ICOUNT_FIELDS = ["program", "workload", "mode", "instructions",
                 "ref_instructions", "ratio", "cc"]
WALL_FIELDS = ["program", "workload", "variant", "round", "seconds", "rc"]


def log(msg):
    print("bench-real: " + msg, file=sys.stderr, flush=True)


def module_vars(prog):
    """ICOUNT/BENCH of a progs/<prog>.sh module (sourced by bash)."""
    mod = os.path.join(REAL, "progs", prog + ".sh")
    out = subprocess.run(
        ["bash", "-c", 'PKG="" BENCH=() ICOUNT=() TESTS=() QUICK_TESTS=(); '
         '. "$1"; echo "${ICOUNT[0]:-${BENCH[0]:-}}"', "x", mod],
        capture_output=True, text=True, check=True).stdout.split()
    return mod, (out[0] if out else None)


def run_sh(args, out_dir, logf):
    env = dict(os.environ, FINEIBT_REAL_OUT=out_dir, BUILD=BUILD)
    with open(logf, "a") as f:
        rc = subprocess.run(["nice", "-n", "10", "bash",
                             os.path.join(REAL, "run.sh")] + args,
                            cwd=ROOT, env=env, stdout=f,
                            stderr=subprocess.STDOUT).returncode
    return rc


def icount(cc, progs, modes, out_dir, logf):
    """Run run.sh --icount for one compiler; rows of its csv."""
    src = os.path.join(BUILD, "bench", "real-programs-icount-%s.csv" % cc)
    # fineibt: only @modes (run.sh's default adds the v6.18 set: 14 runs)
    ma = ["--modes", " ".join(modes)] if cc.startswith("fineibt") else []
    rc = run_sh(["--cc", cc, "--icount"] + ma + progs, out_dir, logf)
    if rc:
        log("%s: run.sh --icount exited %d (see %s)" % (cc, rc, logf))
    rows = []
    if os.path.exists(src):
        with open(src) as f:
            rows = [r for r in csv.DictReader(f) if r["program"] in progs]
    # Keep the other programs' rows of earlier runs: the table can be
    # made up from runs of a few programs each.
    keep = os.path.join(BUILD, "bench", "real-icount-%s.csv" % cc)
    old = []
    if os.path.exists(keep):
        with open(keep) as f:
            old = [r for r in csv.DictReader(f)
                   if r["program"] not in progs or
                   (cc.startswith("fineibt") and r["mode"] not in modes + ["ref"])]
    write_csv(keep, old + rows, ICOUNT_FIELDS)
    return rows


def ratio_of(text):
    """A ratio of run.sh's csv; "failed" (the run died) stays a word."""
    try:
        return float(text)
    except ValueError:
        return "failed"


def saved_icount(cc):
    keep = os.path.join(BUILD, "bench", "real-icount-%s.csv" % cc)
    if not os.path.exists(keep):
        return []
    with open(keep) as f:
        return list(csv.DictReader(f))


def write_csv(path, rows, fields):
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    os.replace(path + ".tmp", path)


def tree(out_dirs, prog, cc):
    """The built tree of @prog by @cc in the first of @out_dirs having one."""
    for d in out_dirs:
        if os.path.exists(os.path.join(d, prog, cc, ".built")):
            return os.path.join(d, prog, cc, "tree")
    return None


def time_one(cmd, env, scratch_root):
    d = tempfile.mkdtemp(dir=scratch_root)
    try:
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, cwd=d, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL).returncode
        return time.perf_counter() - t0, rc
    finally:
        shutil.rmtree(d, ignore_errors=True)


def save_wall(prog, test, times, bad):
    raw = [{"program": prog, "workload": test, "variant": k,
            "round": i, "seconds": "%.6f" % t, "rc": int(k in bad)}
           for k in times for i, t in enumerate(times[k])]
    write_csv(os.path.join(BUILD, "bench", "real-wall-%s.csv" % prog),
              raw, WALL_FIELDS)


def wall(jobs, reps, cpu, out_dirs, until=None):
    """jobs: [(prog, [(key, tree, mode or None, uses_rt)])]. Round after
    round, every variant of every program once; each program's raw times
    are saved after every round (real-wall-<prog>.csv). No round starts
    after @until (epoch seconds): rounds stay complete, so every variant
    of a program has as many runs as the others."""
    base = dict(os.environ)
    for k in ("FINEIBT_CFI", "FINEIBT_VERBOSE", "LD_PRELOAD"):
        base.pop(k, None)
    # the runtime snapshot run.sh took with the fineibt build
    rt = next((os.path.join(d, "rt") for d in out_dirs
               if os.path.exists(os.path.join(d, "rt", "libfineibt.so.0"))),
              os.path.join(out_dirs[0], "rt"))
    scratch = tempfile.mkdtemp(dir=out_dirs[0], prefix="bench-scratch.")
    state = {}
    for prog, variants in jobs:
        mod, test = module_vars(prog)
        state[prog] = (mod, test, list(variants),
                       {k: [] for k, *_ in variants}, set())
    try:
        for r in range(reps):
            if until is not None and r > 0 and time.time() >= until:
                log("--until reached: stopping after %d rounds" % r)
                break
            for prog, _ in jobs:
                mod, test, order, times, bad = state[prog]
                # a new order each round (seeded: reproducible), so that
                # no variant always runs right after the same other one
                random.Random(r).shuffle(order)
                for key, tr, mode, uses_rt in order:
                    env = dict(base)
                    if mode:
                        env["FINEIBT_CFI"] = mode
                    if uses_rt:
                        env["LD_LIBRARY_PATH"] = rt
                    cmd = ["taskset", "-c", str(cpu), "nice", "-n", "10",
                           "bash", os.path.join(REAL, "one.sh"), mod, test, tr]
                    s, rc = time_one(cmd, env, scratch)
                    if rc:
                        bad.add(key)
                    times[key].append(s)
                save_wall(prog, test, times, bad)
            log("round %d/%d done" % (r + 1, reps))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def from_raw(raw):
    """Rows of real-wall-<prog>.csv -> (workload, times, ratios, bad)."""
    times, bad, by_round = {}, set(), {}
    for r in raw:
        times.setdefault(r["variant"], []).append(float(r["seconds"]))
        by_round.setdefault(int(r["round"]), {})[r["variant"]] = float(r["seconds"])
        if r["rc"] != "0":
            bad.add(r["variant"])
    ratios = {k: [c[k] / c["ref"] for c in by_round.values() if k in c and "ref" in c]
              for k in times}
    return (raw[0]["workload"] if raw else "-"), times, ratios, bad


def rounds_text(wt):
    """How many rounds the wall times have: "15", "11-15", "-" (none)."""
    n = sorted(len(times.get("ref", [])) for _, times, _, _ in wt.values())
    if not n:
        return "-"
    return str(n[0]) if n[0] == n[-1] else "%d-%d" % (n[0], n[-1])


def quartiles(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return q[0], statistics.median(xs), q[2]


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr, exit status 2."""

    def error(self, message):
        print("bench-real: %s (bench/real.py --help)" % message, file=sys.stderr)
        sys.exit(2)


def main():
    ap = OneLineParser(description=__doc__.split("\n")[0])
    ap.add_argument("progs", nargs="*", default=DEFAULT_PROGS)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--cpu", type=int, default=int(os.environ.get("BENCH_CPU", "1")))
    ap.add_argument("--until", metavar="HH:MM",
                    help="wall time: start no round after this UTC time "
                         "(today; rounds already started finish)")
    ap.add_argument("--no-icount", action="store_true",
                    help="only wall time (variants must be built: run once without)")
    ap.add_argument("--no-time", action="store_true", help="only instructions")
    ap.add_argument("--table-only", action="store_true",
                    help="no build, no run: the tables from the saved csv files")
    ap.add_argument("--ccs", default="fineibt,clang-lto,clang-cfi-icall,standin-raw",
                    help="compilers to build and count (comma-separated; empty: "
                         "none, e.g. wall time of what is built)")
    ap.add_argument("--modes", default=",".join(MODE_LABEL.get(m, m) for m in MODES),
                    help="fineibt modes to count and time (comma-separated, "
                         "table names: off,kcfi,fineibt,paranoid,bhi,"
                         "paranoid+bhi,auto; default: all)")
    ap.add_argument("--readme", action="store_true",
                    help="replace the bench-real section of docs/bench.md with the tables")
    ap.add_argument("--readme-file", default=os.path.join(ROOT, "docs", "bench.md"),
                    help="the file --readme rewrites (default: docs/bench.md)")
    ap.add_argument("--out", default=os.environ.get("FINEIBT_REAL_OUT",
                                                    os.path.join(BUILD, "real")),
                    help="run.sh's output dir; DIR:DIR2:... also looks for "
                         "built trees in the others (wall time)")
    a = ap.parse_args()
    if a.reps < 1:
        ap.error("--reps must be >= 1")
    by_label = dict((MODE_LABEL.get(m, m), m) for m in MODES)
    bad = [m for m in a.modes.split(",") if m and m not in by_label]
    if bad:
        ap.error("unknown mode %s" % bad[0])
    modes = [by_label[m] for m in a.modes.split(",") if m]
    until = None
    if a.until:
        try:
            hh, mm = (int(x) for x in a.until.split(":"))
            if not (0 <= hh < 24 and 0 <= mm < 60):
                raise ValueError
        except ValueError:
            ap.error("--until wants HH:MM (UTC), not %r" % a.until)
        now = time.gmtime()
        until = time.time() + ((hh * 60 + mm) - (now.tm_hour * 60 + now.tm_min)) * 60 - now.tm_sec
    os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
    logf = os.path.join(BUILD, "bench", "real.log")
    ccs = [c for c in a.ccs.split(",") if c]
    outs = [os.path.abspath(d) for d in a.out.split(":") if d]
    a.out = outs[0]

    if a.table_only:
        ccs, a.no_time = [], True
    # 1. build everything, count instructions
    for cc in ccs:
        log("%s: %s" % (cc, "building" if a.no_icount else "building, counting instructions"))
        if a.no_icount:
            rc = run_sh(["--cc", cc, "--bench-only", "--reps", "0"] + a.progs, a.out, logf)
            if rc:
                log("%s: build failed (see %s)" % (cc, logf))
            continue
        icount(cc, a.progs, modes, a.out, logf)
    ic = {}
    for cc in ["fineibt"] + [c for c, _ in PEERS]:
        for row in saved_icount(cc):
            if cc != "fineibt" and row["mode"] == "ref":
                continue
            key = row["mode"] if cc == "fineibt" else cc
            ic[(row["program"], key)] = (int(row["instructions"]),
                                         ratio_of(row["ratio"]),
                                         int(row["ref_instructions"]))

    # 2. wall time, every variant of a program interleaved
    wt = {}
    if not a.no_time:
        jobs = []
        for prog in a.progs:
            ref = tree(outs, prog, "ref")
            fi = tree(outs, prog, "fineibt")
            if not ref or not fi:
                log("%s: not built, no wall time" % prog)
                continue
            vs = [("ref", ref, None, False)]
            for cc, _ in PEERS:
                t = tree(outs, prog, cc)
                if t:
                    vs.append((cc, t, None, False))
            vs += [(m, fi, m, True) for m in modes]
            jobs.append((prog, vs))
        log("wall time: %s, up to %d rounds on cpu %d" %
            (", ".join("%s (%d variants)" % (p, len(v)) for p, v in jobs),
             a.reps, a.cpu))
        wall(jobs, a.reps, a.cpu, outs, until)
    for prog in a.progs:
        p = os.path.join(BUILD, "bench", "real-wall-%s.csv" % prog)
        if os.path.exists(p):
            with open(p) as f:
                wt[prog] = from_raw(list(csv.DictReader(f)))

    # 3. tables
    keys = ["ref"] + [c for c, _ in PEERS] + MODES
    label = dict([("ref", "plain -O2")] + PEERS + [(m, MODE_LABEL.get(m, m)) for m in MODES])
    rows = []
    for prog in a.progs:
        for k in keys:
            r = {"program": prog, "variant": label[k]}
            if (prog, k) in ic:
                r["instructions"], r["icount_ratio"], _ = ic[(prog, k)]
            elif k == "ref" and (prog, "off") in ic:
                r["instructions"], r["icount_ratio"] = ic[(prog, "off")][2], 1.0
            if prog in wt and k in wt[prog][1]:
                test, times, ratios, bad = wt[prog]
                q1, med, q3 = quartiles(times[k])
                r.update(workload=test, wall_median_s="%.4f" % med,
                         wall_spread="%.1f%%" % (100 * (q3 - q1) / med),
                         wall_ratio="%.3f" % statistics.median(ratios[k]),
                         wall_min_s="%.4f" % min(times[k]),
                         wall_min_ratio="%.3f" % (min(times[k]) / min(times["ref"])),
                         reps=len(times[k]), failed=int(k in bad))
            if len(r) > 2:
                rows.append(r)
    fields = ["program", "variant", "instructions", "icount_ratio", "workload",
              "wall_median_s", "wall_spread", "wall_ratio", "wall_min_s",
              "wall_min_ratio", "reps", "failed"]
    write_csv(os.path.join(BUILD, "bench", "real.csv"), rows, fields)

    # one row per variant, one column per program
    progs = [p for p in a.progs if any(x["program"] == p for x in rows)]
    md = ["| variant | " + " | ".join(progs) + " |",
          "|---|" + "---|" * len(progs)]
    for k in keys:
        cells = []
        for prog in progs:
            r = next((x for x in rows if x["program"] == prog and x["variant"] == label[k]), None)
            if not r:
                cells.append("-")
                continue
            ins = r.get("icount_ratio", "-")
            if not isinstance(ins, str):
                ins = "%.3f" % ins
            wall_s = r.get("wall_ratio", "-")
            if "wall_spread" in r:
                wall_s += " ±" + r["wall_spread"]
            if r.get("failed"):
                wall_s += " (failed)"
            cells.append("%s / %s" % (ins, wall_s))
        md.append("| %s | %s |" % (label[k], " | ".join(cells)))
    notes = ["", "Each cell: instructions / wall time, both as ratios to plain "
             "clang-22 -O2 of the same program (instructions: callgrind, the "
             "module's ICOUNT workload; wall: median over %s interleaved "
             "rounds of the per-round ratio, pinned to one CPU, ± the "
             "interquartile range of the variant's own times over its "
             "median). Raw numbers, and the ratio of the fastest runs: "
             "build/bench/real.csv, real-wall-<prog>.csv." % rounds_text(wt)]
    text = "\n".join(md + notes) + "\n"
    mdp = os.path.join(BUILD, "bench", "real.md")
    with open(mdp + ".tmp", "w") as f:
        f.write(text)
    os.replace(mdp + ".tmp", mdp)
    print(text)
    if a.readme:
        rp = a.readme_file
        s = open(rp).read()
        i, j = s.find(README_BEGIN), s.find(README_END)
        if i < 0 or j < i:
            log("%s has no bench-real markers: not updated" % rp)
            return 1
        s = s[:i + len(README_BEGIN)] + "\n" + text + s[j:]
        with open(rp + ".tmp", "w") as f:
            f.write(s)
        os.replace(rp + ".tmp", rp)
        log("%s updated" % rp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
