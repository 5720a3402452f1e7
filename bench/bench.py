#!/usr/bin/env python3
"""make bench: cost per indirect call, start-up cost, whole programs.

Usage: bench/bench.py [--cycles N] [--startup-cycles N] [--quick]
                      [--no-callgrind] [--no-build]
Env: BUILD (build dir, default build), NFUNCS (callees of the cold loop,
default 4096).

Builds bench/bench.mk's programs, runs them as separate processes, one
process per variant, interleaved (A B C ... A B C ...; each cycle starts
one variant later), and prints medians over the cycles with their min-max
spread, plus ratios taken inside each cycle (against the no-CFI build and
against the hand-written floor of the same cycle). Writes CSV files and a
PNG plot under $BUILD/bench/. See docs/bench.md for what each number means.

Timings are never asserted on: this script only reports.
"""
import argparse
import csv
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
BDIR = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
B = os.path.join(BDIR, "bench")
NFUNCS = int(os.environ.get("NFUNCS", "4096"))

# FINEIBT_CFI value -> the floor.S build with the same sequences
MODES = ["off", "kcfi", "fineibt", "fineibt,paranoid", "fineibt,bhi",
         "fineibt,paranoid,bhi", "auto"]
FLOOR = {"off": "off", "kcfi": "kcfi", "fineibt": "fineibt",
         "fineibt,paranoid": "paranoid", "fineibt,bhi": "bhi",
         "fineibt,paranoid,bhi": "paranoid-bhi", "auto": "kcfi"}
FLOOR_BUILDS = ["off", "kcfi", "fineibt", "paranoid", "bhi", "paranoid-bhi"]
# every floor also in the v6.18 sequence set (bench/floor.S FLOOR_SET=v618)
FLOOR_BUILDS += [f + "-v618" for f in FLOOR_BUILDS]
STARTUP_MODES = ["off", "kcfi", "kcfi,norand", "fineibt", "fineibt,norand",
                 "fineibt,paranoid", "fineibt,bhi", "fineibt,paranoid,bhi",
                 "auto"]

# Modes measured again with FINEIBT_SEQ=v6.18 (auto is kcfi: the kernel's
# rule without user IBT, docs/runtime.md).
SEQ618_MODES = ["off", "kcfi", "fineibt", "fineibt,paranoid", "fineibt,bhi",
                "fineibt,paranoid,bhi"]



def floor_of(kind, mode):
    """The floor.S build with the sequences of a patched variant."""
    return FLOOR[mode] + ("-v618" if kind == "cc618" else "")


TARGET_FLOOR = 1.02         # runtime-patched within 2% of hand-written
TARGET_SITES = 20e6         # sites patched per second


def say(msg=""):
    print(msg, flush=True)


def med(v):
    return statistics.median(v) if v else float("nan")


def spread(v, fmt="%.2f"):
    if not v:
        return "-"
    return (fmt + " [" + fmt + "-" + fmt + "]") % (med(v), min(v), max(v))


# ------------------------------------------------------------------ build

def build(args):
    cmd = ["make", "--no-print-directory", "-f", "bench/bench.mk",
           "BUILD=" + BUILD, "NFUNCS=%d" % NFUNCS, "-j2", "calls"]
    if not args.quick:
        cmd.append("startup")
    say("building (%s) ..." % " ".join(cmd[3:]))
    log = os.path.join(B, "build.log")
    os.makedirs(B, exist_ok=True)
    with open(log, "w") as f:
        r = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        say("bench: build failed; last lines of %s:" % log)
        with open(log) as f:
            say("".join(f.readlines()[-15:]))
        sys.exit(1)


# ------------------------------------------------------------ processes

def run(argv, env=None, check=True):
    e = dict(os.environ)
    e.pop("FINEIBT_VERBOSE", None)
    e.pop("FINEIBT_SEQ", None)
    e.update(env or {})
    for attempt in range(2):
        t0 = time.perf_counter_ns()
        r = subprocess.run(argv, env=e, capture_output=True, text=True)
        wall = (time.perf_counter_ns() - t0) / 1e3
        if not (check and r.returncode):
            break
        # build/ is shared: a concurrent `make` may be rewriting
        # libfineibt.so right now. Try once more before giving up.
        time.sleep(2)
    if check and r.returncode:
        say("bench: %s (%s) failed with status %d:\n%s" % (
            " ".join(argv), env, r.returncode, r.stderr.strip()))
        sys.exit(1)
    return r, wall


def keyvals(text):
    return dict(re.findall(r"(\w+)=(\S+)", text))


def calls_variants():
    """(name, kind, mode, argv, env) of every process of a cycle."""
    v = [("no CFI (clang-22)", "nocfi", "", [os.path.join(B, "calls-nocfi")], {}),
         ("kCFI as compiled, no runtime", "nort", "",
          [os.path.join(B, "calls-cc-nort")], {})]
    for m in MODES:
        v.append(("patched " + m, "cc", m, [os.path.join(B, "calls-cc"), "-f",
                                             FLOOR[m].replace("-", "_")],
                  {"FINEIBT_CFI": m}))
    # The v6.18 sequence set (docs/sequences.md), same binary and loops.
    for m in SEQ618_MODES:
        v.append(("patched " + m + " v6.18", "cc618", m,
                  [os.path.join(B, "calls-cc"), "-f",
                   floor_of("cc618", m).replace("-", "_")],
                  {"FINEIBT_CFI": m, "FINEIBT_SEQ": "v6.18"}))
    for f in FLOOR_BUILDS:
        v.append(("hand " + f, "floor", f,
                  [os.path.join(B, "calls-floor-" + f)], {}))
    return v


# --------------------------------------------------- same code, checked

def same_code():
    """Per mode: do the patched bytes equal the hand-written ones, except
    immediates (hashes, rel32)? Differences must come in runs <= 4 bytes."""
    out = {}
    for kind, m in [("cc", m) for m in MODES] + [("cc618", m) for m in SEQ618_MODES]:
        env = {"FINEIBT_CFI": m}
        if kind == "cc618":
            env["FINEIBT_SEQ"] = "v6.18"
        a, _ = run([os.path.join(B, "calls-cc"), "-d", "-H", "1000",
                    "-C", "1000", "-r", "1"], env)
        b, _ = run([os.path.join(B, "calls-floor-" + floor_of(kind, m)), "-d", "-H",
                    "1000", "-C", "1000", "-r", "1"])
        ka, kb = keyvals(a.stdout), keyvals(b.stdout)
        runs, ok = 0, True
        for key in ("hot_code", "callee_code"):
            x, y = bytes.fromhex(ka[key]), bytes.fromhex(kb[key])
            i = 0
            while i < len(x):
                if x[i] == y[i]:
                    i += 1
                    continue
                j = i
                while j < len(x) and x[j] != y[j]:
                    j += 1
                runs += 1
                ok &= j - i <= 4
                i = j + 1
        out[m + (" v6.18" if kind == "cc618" else "")] = \
            "yes (%d imm)" % runs if ok else "NO"
    return out


# ------------------------------------------------------- per-call cycles

def calls_cycles(n, cpu, quick):
    variants = calls_variants()
    argx = ["-p", str(cpu), "-r", "9" if quick else "15",
            "-H", "262144", "-C", str(16 * NFUNCS)]
    rows = []
    for c in range(n):
        k = c % len(variants)
        for name, kind, mode, argv, env in variants[k:] + variants[:k]:
            r, _ = run(argv + argx, env)
            kv = keyvals(r.stdout)
            rows.append({"cycle": c, "variant": name, "kind": kind,
                         "mode": mode,
                         "hot_best_ns": float(kv["hot_min"]),
                         "hot_median_ns": float(kv["hot_ns"]),
                         "cold_best_ns": float(kv["cold_min"]),
                         "cold_median_ns": float(kv["cold_ns"]),
                         "hot_inproc_ratio": float(kv.get("inproc_hot_ratio", "nan")),
                         "cold_inproc_ratio": float(kv.get("inproc_cold_ratio", "nan"))})
        if c % 5 == 4 or c == n - 1:
            say("  calls: cycle %d/%d" % (c + 1, n))
    return rows


def callgrind(cpu):
    """Instructions and simulated D1 read misses per call (deterministic)."""
    vg = shutil.which("valgrind")
    if not vg:
        say("  (no valgrind: instruction counts skipped; apt-get install valgrind)")
        return {}
    say("  callgrind: instruction counts (cached in $BUILD/bench/vg/counts.json) ...")
    # valgrind 3.19 cannot read clang-22's DWARF 5 in libfineibt.so: give
    # it a copy without debug info (found first through LD_LIBRARY_PATH).
    vgdir = os.path.join(B, "vg")
    os.makedirs(vgdir, exist_ok=True)
    so = os.path.join(vgdir, "libfineibt.so.0")
    strip = shutil.which("llvm-objcopy-22") or "objcopy"
    lib = os.path.join(BDIR, "libfineibt.so")
    if not os.path.exists(so) or os.stat(so).st_mtime_ns < os.stat(lib).st_mtime_ns:
        subprocess.run([strip, "--strip-debug", lib, so], check=True)
    # Counts are deterministic: reuse them while the binaries are the same.
    cache_path = os.path.join(vgdir, "counts.json")
    try:
        with open(cache_path) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}
    out = {}
    calls = 2 * 4096        # warm-up + one repetition
    for name, kind, mode, argv, env in calls_variants():
        key = "%s|%s|%d|%d" % (name, env, os.stat(argv[0]).st_mtime_ns,
                              os.stat(lib).st_mtime_ns)
        if key in cache:
            out[name] = cache[key]
            continue
        res = {}
        for loop in ("hot", "cold"):
            cg = os.path.join(vgdir, "cg.out")
            e = dict(env)
            e["LD_LIBRARY_PATH"] = vgdir
            run([vg, "--tool=callgrind", "--cache-sim=yes",
                 "--toggle-collect=bench_" + loop, "--callgrind-out-file=" + cg]
                + argv + ["-r", "1", "-H", "4096", "-C", "4096"], e)
            with open(cg) as f:
                text = f.read()
            ev = re.search(r"^events: (.*)$", text, re.M).group(1).split()
            tot = [int(x) for x in re.search(r"^totals: (.*)$", text, re.M).group(1).split()]
            tot += [0] * (len(ev) - len(tot))
            d = dict(zip(ev, tot))
            res[loop + "_ir"] = d.get("Ir", 0) / calls
            res[loop + "_d1mr"] = d.get("D1mr", 0) / calls
        out[name] = cache[key] = res
    with open(cache_path, "w") as f:
        json.dump(cache, f)
    return out


def summarize_calls(rows, stat):
    """Per variant: values over cycles; ratios against the same cycle's
    no-CFI run and (for patched modes) against the same cycle's floor."""
    by = {}
    for r in rows:
        by.setdefault(r["cycle"], {})[r["variant"]] = r
    summ = {}
    for name, kind, mode, _, _ in calls_variants():
        s = {"kind": kind, "mode": mode}
        for loop in ("hot", "cold"):
            key = "%s_%s_ns" % (loop, stat)
            vals, vs_base, vs_floor, inproc = [], [], [], []
            for cyc in by.values():
                if name not in cyc:
                    continue
                x = cyc[name][key]
                vals.append(x)
                vs_base.append(x / cyc["no CFI (clang-22)"][key])
                if kind in ("cc", "cc618"):
                    inproc.append(cyc[name][loop + "_inproc_ratio"])
                    fl = cyc.get("hand " + floor_of(kind, mode))
                    if fl:
                        vs_floor.append(x / fl[key])
            s[loop] = vals
            s[loop + "_vs_nocfi"] = vs_base
            s[loop + "_vs_floor"] = vs_floor
            s[loop + "_inproc"] = inproc
        summ[name] = s
    return summ


def print_calls(summ, cg, same, ncycles):
    say()
    say("Cost per indirect call, ns (median over %d interleaved cycles [min-max];"
        % ncycles)
    say("each process reports its best of 15 repetitions; ratios are medians of")
    say("per-cycle ratios). hot: one callee; cold: %d callees over %d KiB of text,"
        % (NFUNCS, NFUNCS * 256 // 1024))
    say("shuffled. patched/hand: the patched process also runs the hand-written loops,")
    say("alternating repetition by repetition (ratio of the two best repetitions);")
    say("x-proc: against the separate hand-written process of the same cycle.")
    say("Ir/call and D1mr/call: callgrind (per loop iteration).")
    for loop in ("hot", "cold"):
        say()
        hdr = "%-29s %-20s %-20s %-21s %-6s %-21s %5s %5s" % (
            loop + ": variant", "patched ns", "hand-written ns",
            "patched/hand", "x-proc", "vs no CFI", "Ir", "D1mr")
        say(hdr)
        say("-" * len(hdr))
        for name, s in summ.items():
            if s["kind"] == "floor":
                continue
            c = cg.get(name, {})
            hand = pf = xp = "-"
            if s["kind"] in ("cc", "cc618"):
                hname = "hand " + floor_of(s["kind"], s["mode"])
                hand = spread(summ[hname][loop])
                pf = spread(s[loop + "_inproc"], "%.3f")
                xp = "%.3f" % med(s[loop + "_vs_floor"])
            ir = c.get(loop + "_ir")
            d1 = c.get(loop + "_d1mr")
            label = name.replace("patched ", "")
            say("%-29s %-20s %-20s %-21s %-6s %-21s %5s %5s" % (
                label, spread(s[loop]), hand, pf, xp,
                spread(s[loop + "_vs_nocfi"], "%.3f"),
                "%.1f" % ir if ir is not None else "-",
                "%.2f" % d1 if d1 is not None else "-"))
    say()
    say("Sequence sets: v6.18 / v4, same mode, same cycle (median ratio of the")
    say("per-cycle best ns; Ir/call from callgrind, v4 -> v6.18):")
    for m in SEQ618_MODES:
        a, b = summ.get("patched " + m), summ.get("patched " + m + " v6.18")
        if not a or not b:
            continue
        parts = []
        for loop in ("hot", "cold"):
            r = med([y / x for x, y in zip(a[loop], b[loop])])
            ca = cg.get("patched " + m, {}).get(loop + "_ir")
            cb = cg.get("patched " + m + " v6.18", {}).get(loop + "_ir")
            ir = "Ir %.1f -> %.1f" % (ca, cb) if ca is not None and cb is not None else ""
            parts.append("%s %.3f %s" % (loop, r, ir))
        say("  %-22s %s" % (m, "; ".join(parts)))
    say()
    say("Same code: the patched loop and callee bytes equal the hand-written ones")
    say("except hash/rel32 immediates: " +
        ", ".join("%s %s" % (m, v) for m, v in same.items()))
    for kind, sname in (("cc", "v4"), ("cc618", "v6.18")):
        worst = max((med(s[l + "_inproc"]), n, l) for n, s in summ.items()
                    if s["kind"] == kind for l in ("hot", "cold"))
        say("Target (%s): patched within %d%% of hand-written: worst median ratio %.3f (%s, %s) -> %s"
            % (sname, round((TARGET_FLOOR - 1) * 100), worst[0],
               worst[1].replace("patched ", ""), worst[2],
               "met" if worst[0] <= TARGET_FLOOR else "NOT met"))


def write_calls_csv(rows, summ, cg):
    with open(os.path.join(B, "calls-raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    path = os.path.join(B, "calls.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "kind", "mode", "loop", "ns_median", "ns_min",
                    "ns_max", "vs_nocfi", "vs_floor", "vs_floor_same_process",
                    "ir_per_call",
                    "d1mr_per_call", "cycles"])
        for name, s in summ.items():
            for loop in ("hot", "cold"):
                c = cg.get(name, {})
                w.writerow([name, s["kind"], s["mode"], loop,
                            "%.4f" % med(s[loop]), "%.4f" % min(s[loop]),
                            "%.4f" % max(s[loop]),
                            "%.4f" % med(s[loop + "_vs_nocfi"]),
                            "%.4f" % med(s[loop + "_vs_floor"])
                            if s[loop + "_vs_floor"] else "",
                            "%.4f" % med(s[loop + "_inproc"])
                            if s[loop + "_inproc"] else "",
                            "%.2f" % c[loop + "_ir"] if c else "",
                            "%.3f" % c[loop + "_d1mr"] if c else "",
                            len(s[loop])])
    return path


# ------------------------------------------------------------- start-up

def startup_sites():
    """Preambles + call sites the runtime rewrites, per mode."""
    big = os.path.join(B, "startup", "big")
    out = {}
    for m in STARTUP_MODES:
        r, _ = run([big], {"FINEIBT_CFI": m, "FINEIBT_VERBOSE": "1"})
        pre = sum(int(x) for x in re.findall(r"(\d+) preambles", r.stderr))
        cs = sum(int(x) for x in re.findall(r"(\d+) call sites", r.stderr))
        out[m] = (pre, cs)
    return out


def passes_speed():
    """bench/patch_speed on the start-up program: {mode: (cpu, wall) M/s}."""
    ps = os.path.join(B, "patch_speed")
    if not os.path.exists(ps):
        return {}
    r, _ = run([ps, os.path.join(B, "startup", "big"), "9"], check=False)
    out = {}
    for m in re.finditer(r"^(\S+)\s+\d+ sites\s+cpu\s+[\d.]+ ms =\s*([\d.]+) M sites/s"
                         r"\s+wall\s+[\d.]+ ms =\s*([\d.]+) M/s", r.stdout, re.M):
        out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return out


def startup_cycles(n):
    s = os.path.join(B, "startup")
    variants = [("no runtime", [os.path.join(s, "big-nort")], {})]
    variants += [(m, [os.path.join(s, "big")], {"FINEIBT_CFI": m})
                 for m in STARTUP_MODES]
    rows = []
    for c in range(n):
        k = c % len(variants)
        for name, argv, env in variants[k:] + variants[:k]:
            r, wall = run(argv, env)
            kv = keyvals(r.stdout)
            rows.append({"cycle": c, "variant": name, "wall_us": wall,
                         "init_us": float(kv["init_us"]),
                         "private_dirty_kb": int(kv["private_dirty_kb"]),
                         "rss_kb": int(kv["rss_kb"])})
        if c % 5 == 4 or c == n - 1:
            say("  start-up: cycle %d/%d" % (c + 1, n))
    return rows


def summarize_startup(rows, sites):
    by = {}
    for r in rows:
        by.setdefault(r["cycle"], {})[r["variant"]] = r
    summ = {}
    for name in ["no runtime"] + STARTUP_MODES:
        wall, init, xwall, xinit, pd, xpd, rate = [], [], [], [], [], [], []
        nsites = sum(sites.get(name, (0, 0)))
        for cyc in by.values():
            base, r = cyc["no runtime"], cyc[name]
            wall.append(r["wall_us"] / 1e3)
            init.append(r["init_us"] / 1e3)
            xwall.append((r["wall_us"] - base["wall_us"]) / 1e3)
            xinit.append((r["init_us"] - base["init_us"]) / 1e3)
            pd.append(r["private_dirty_kb"])
            xpd.append(r["private_dirty_kb"] - base["private_dirty_kb"])
            if nsites and r["init_us"] > base["init_us"]:
                rate.append(nsites / ((r["init_us"] - base["init_us"]) / 1e6))
        summ[name] = {"wall": wall, "init": init, "xwall": xwall,
                      "xinit": xinit, "pd": pd, "xpd": xpd, "rate": rate,
                      "sites": sites.get(name, (0, 0))}
    return summ


def print_startup(summ, ncycles, passes):
    say()
    say("Start-up: bench/gen_big.py program (%s), median over %d interleaved cycles"
        % (startup_desc(summ), ncycles))
    say("[min-max]. wall: fork to exit; init: preinit_array to main (the runtime's")
    say("constructor); extra: minus the no-runtime build in the same cycle.")
    hdr = "%-22s %-20s %-20s %-20s %-16s %-9s %s" % (
        "FINEIBT_CFI", "wall ms", "extra wall ms", "init ms",
        "Msites/s", "sites", "Private_Dirty kB (+extra)")
    say(hdr)
    say("-" * len(hdr))
    for name, s in summ.items():
        pre, cs = s["sites"]
        rate = [x / 1e6 for x in s["rate"]]
        say("%-22s %-20s %-20s %-20s %-16s %-9s %d (+%d)" % (
            name, spread(s["wall"], "%.1f"),
            spread(s["xwall"], "%.1f") if name != "no runtime" else "-",
            spread(s["init"], "%.2f"),
            spread(rate, "%.1f") if rate else "-",
            "%d" % (pre + cs) if name != "no runtime" else "-",
            med(s["pd"]), med(s["xpd"])))
    rates = [med(s["rate"]) for n, s in summ.items() if s["rate"]]
    if passes:
        say("Passes alone (bench/patch_speed.c: fi_patch_image on the same file, no file")
        say("reading, median of 9; M sites/s by thread CPU time / by wall time): " +
            ", ".join("%s %.1f/%.1f" % (m, c, w) for m, (c, w) in passes.items()))
    if rates:
        low = min(rates)
        say("Target: >= %d million sites patched per second: end to end (init), slowest"
            " mode %.1f M/s -> %s" % (TARGET_SITES / 1e6, low / 1e6,
                                      "met" if low >= TARGET_SITES else "NOT met"), )
    if passes:
        low = min(c for c, w in passes.values())
        say("        passes alone (CPU time), slowest mode %.1f M/s -> %s" % (
            low, "met" if low * 1e6 >= TARGET_SITES else "NOT met"))


def startup_desc(summ):
    pre, cs = summ.get("fineibt", {"sites": (0, 0)})["sites"]
    return "%d preambles, %d call sites" % (pre, cs)


def write_startup_csv(rows, summ):
    with open(os.path.join(B, "startup-raw.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    path = os.path.join(B, "startup.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "wall_ms", "extra_wall_ms", "init_ms", "extra_init_ms",
                    "sites", "msites_per_s", "private_dirty_kb",
                    "extra_private_dirty_kb", "cycles"])
        for name, s in summ.items():
            pre, cs = s["sites"]
            w.writerow([name, "%.2f" % med(s["wall"]), "%.2f" % med(s["xwall"]),
                        "%.3f" % med(s["init"]), "%.3f" % med(s["xinit"]),
                        pre + cs,
                        "%.2f" % (med(s["rate"]) / 1e6) if s["rate"] else "",
                        med(s["pd"]), med(s["xpd"]), len(s["wall"])])
    return path


# ------------------------------------------------------- whole programs

def real_programs():
    rows = []
    for path in sorted(glob.glob(os.path.join(B, "real-programs-*.csv"))):
        with open(path) as f:
            rows += [dict(r, source=os.path.basename(path)) for r in csv.DictReader(f)]
    return rows


def print_real(rows):
    say()
    if not rows:
        say("Whole programs: no $BUILD/bench/real-programs-*.csv yet. Produce it with")
        say("  scripts/real/run.sh            (builds Debian programs with fineibt-cc,")
        say("  runs their workloads in every mode; ~minutes) then run make bench again.")
        return
    say("Whole programs (scripts/real/run.sh; time / plain clang-22 time, median of")
    say("its runs): " + ", ".join(sorted({r["source"] for r in rows})))
    modes = []
    for r in rows:
        if r["mode"] != "ref" and r["mode"] not in modes:
            modes.append(r["mode"])
    table = {}
    for r in rows:
        if r["mode"] == "ref":
            continue
        table.setdefault((r["program"], r["workload"], r["cc"]), {})[r["mode"]] = r
    def short(m):
        return m.replace("fineibt", "fi").replace("paranoid", "par")
    hdr = "%-30s" % "program/workload (cc)" + "".join(" %10s" % short(m) for m in modes)
    say(hdr)
    say("-" * len(hdr))
    for (p, w, cc), by in table.items():
        say("%-30s" % ("%s/%s (%s)" % (p, w, cc))[:30] +
            "".join(" %10s" % (by[m]["ratio"] if m in by else "-") for m in modes))
    say("auto next to kcfi (auto = kcfi since the kernel's rule; CSVs from before")
    say("measured auto = fineibt,paranoid, the paranoid caller plus FineIBT preambles):")
    for (p, w, cc), by in table.items():
        a, k, fp = by.get("auto"), by.get("kcfi"), by.get("fineibt,paranoid")
        if not (a and k):
            continue
        ra, rk = float(a["ratio"]), float(k["ratio"])
        rfp = float(fp["ratio"]) if fp else ra
        line = "  %s/%s: auto %.3f, kcfi %.3f" % (p, w, ra, rk)
        if ra > rk * 1.01:
            line += (" -> auto higher: the paranoid caller loads the hash from the"
                     " target (as kcfi does) and the callee checks it again (FineIBT)")
            if abs(ra - rfp) > abs(ra - rk):
                line += ("; but fineibt,paranoid (same code) measured %.3f: noise"
                         " dominates, rerun scripts/real/run.sh with more --reps" % rfp)
        say(line)


# ------------------------------------------------------------------ plot

def gnuplot():
    g = shutil.which("gnuplot")
    if g:
        return g
    if os.geteuid() == 0 and shutil.which("apt-get"):
        say("bench: gnuplot is missing; installing gnuplot-nox (apt-get) for the plot ...")
        r = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends",
                            "gnuplot-nox"], capture_output=True, text=True,
                           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if r.returncode == 0:
            return shutil.which("gnuplot")
    say("bench: no gnuplot, so no PNG (apt-get install gnuplot-nox); the CSV files are written")
    return None


def plot(summ, ssumm, real):
    g = gnuplot()
    if not g:
        return None
    dat = os.path.join(B, "plot-calls.dat")
    with open(dat, "w") as f:
        f.write("# mode hot_patched hot_hand cold_patched cold_hand hot_nocfi cold_nocfi\n")
        base = summ["no CFI (clang-22)"]
        for m in MODES:
            s, h = summ["patched " + m], summ["hand " + FLOOR[m]]
            f.write('"%s" %.4f %.4f %.4f %.4f %.4f %.4f\n' % (
                m.replace("fineibt", "fi"), med(s["hot"]), med(h["hot"]),
                med(s["cold"]), med(h["cold"]), med(base["hot"]), med(base["cold"])))
    panels = []
    for i, loop in enumerate(("hot", "cold")):
        col = 2 + 2 * i
        panels.append(
            'set title "%s indirect call: ns per call (median)"\n'
            'plot "%s" using %d:xtic(1) title "runtime-patched", '
            '"" using %d title "hand-written", "" using %d with lines lw 2 '
            'title "no CFI"\n' % (loop, dat, col, col + 1, 6 + i))
    rdat0 = os.path.join(B, "plot-ratios.dat")
    with open(rdat0, "w") as f:
        for m in MODES:
            s = summ["patched " + m]
            f.write('"%s" %.4f %.4f\n' % (m.replace("fineibt", "fi"),
                                         med(s["hot_vs_nocfi"]), med(s["cold_vs_nocfi"])))
    panels.append(
        'set title "runtime-patched / no CFI, same cycle (median)"\n'
        'plot "%s" using 2:xtic(1) title "hot", "" using 3 title "cold", '
        '1 with lines lw 2 title "no CFI"\n' % rdat0)
    if ssumm:
        sdat = os.path.join(B, "plot-startup.dat")
        with open(sdat, "w") as f:
            for m in STARTUP_MODES:
                f.write('"%s" %.3f %.2f\n' % (m.replace("fineibt", "fi"),
                                               med(ssumm[m]["xwall"]), med(ssumm[m]["xpd"]) / 1024))
        panels.append(
            'set title "start-up, %s: extra ms and MiB"\n'
            'plot "%s" using 2:xtic(1) title "extra wall ms", "" using 3 title '
            '"extra Private-Dirty MiB"\n' % (startup_desc(ssumm), sdat))
    if real:
        rdat = os.path.join(B, "plot-real.dat")
        modes = [m for m in MODES if any(r["mode"] == m for r in real)]
        keys = []
        for r in real:
            k = "%s/%s" % (r["program"], r["workload"])
            if r["mode"] != "ref" and k not in keys:
                keys.append(k)
        with open(rdat, "w") as f:
            for m in modes:
                vals = []
                for k in keys:
                    v = [float(r["ratio"]) for r in real
                         if r["mode"] == m and "%s/%s" % (r["program"], r["workload"]) == k]
                    vals.append("%.4f" % v[0] if v else "NaN")
                f.write('"%s" %s\n' % (m.replace("fineibt", "fi"), " ".join(vals)))
        panels.append(
            'set title "whole programs: time / plain clang-22"\n'
            'plot ' + ", ".join('"%s" using %d%s title "%s"' % (
                rdat, 2 + j, ":xtic(1)" if j == 0 else "", k.replace("_", "-"))
                for j, k in enumerate(keys)) + "\n")
    png = os.path.join(B, "bench.png")
    rows = (len(panels) + 1) // 2
    script = ('set terminal pngcairo size 1400,%d font ",10"\nset output "%s"\n'
              'set style data histograms\nset style histogram clustered gap 1\n'
              'set style fill solid 0.8 border -1\nset boxwidth 0.9\n'
              'set yrange [0:*]\nset grid ytics\n'
              'set key outside top center horizontal noenhanced\n'
              'set xtics rotate by -25\nset multiplot layout %d,2\n%s'
              'unset multiplot\n' % (450 * rows, png, rows, "".join(panels)))
    r = subprocess.run([g], input=script, text=True, capture_output=True)
    if r.returncode:
        say("bench: gnuplot failed: " + r.stderr.strip()[-300:])
        return None
    return png


def cache_startup(rounds):
    """Start-up from the shared text cache: bench/cache_startup.py (hello,
    a hello library, sqlite's speedtest1, bash -c :, 8,000 functions; as
    root only); its report, or None."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "cache_startup.py"),
                        "--rounds", str(rounds)], env=dict(os.environ, BUILD=BDIR),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.stdout if r.stdout.strip() else None


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cycles", type=int, default=41)
    ap.add_argument("--startup-cycles", type=int, default=15)
    ap.add_argument("--quick", action="store_true",
                    help="few cycles, no start-up program (smoke run)")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.cycles = 3
    t0 = time.time()
    if not args.no_build:
        build(args)
    # One CPU for every measured process (the last one we may use).
    cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    say("pinned to CPU %d; %d interleaved cycles of %d processes" % (
        cpu, args.cycles, len(calls_variants())))
    same = same_code()
    rows = calls_cycles(args.cycles, cpu, args.quick)
    cg = {} if args.no_callgrind else callgrind(cpu)
    summ = summarize_calls(rows, "best")
    ssumm, srows, passes = None, None, {}
    if not args.quick:
        sites = startup_sites()
        srows = startup_cycles(args.startup_cycles)
        ssumm = summarize_startup(srows, sites)
        passes = passes_speed()
    real = real_programs()
    cache = None if args.quick else cache_startup(max(31, args.startup_cycles))

    print_calls(summ, cg, same, args.cycles)
    files = [write_calls_csv(rows, summ, cg), os.path.join(B, "calls-raw.csv")]
    if ssumm:
        print_startup(ssumm, args.startup_cycles, passes)
        files += [write_startup_csv(srows, ssumm), os.path.join(B, "startup-raw.csv")]
        if passes:
            files.append(os.path.join(B, "passes.csv"))
            with open(files[-1], "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["mode", "msites_per_s_cpu", "msites_per_s_wall"])
                w.writerows([m, c, wl] for m, (c, wl) in passes.items())
    print_real(real)
    if cache:
        say()
        say(cache.rstrip())
        files.append(os.path.join(B, "cache-startup.csv"))
    png = plot(summ, ssumm, real)
    say()
    say("CSV: " + " ".join(os.path.relpath(f, ROOT) for f in files))
    if png:
        say("plot: " + os.path.relpath(png, ROOT))
    say("(%.0f s)" % (time.time() - t0))


if __name__ == "__main__":
    main()
