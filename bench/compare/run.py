#!/usr/bin/env python3
"""Runs eddy, TensorFlow and JAX side by side on the models of models.py and writes
bench/results.md, bench/results.json and bench/results.png.

For every case: models.py exports the TensorFlow GraphDef and the inputs; eddy imports it
(`eddy import`, `eddy opt`, for gradients `eddy grad`), compiles it to an object linked into
the C driver (eddy-aot), JIT-compiles it (eddy-jit) and interprets it (eddy-interp);
worker.py times TensorFlow (tf.function), TensorFlow with XLA and JAX jit. Every system runs
in its own process on the same .npy inputs. The first call's results of every system are
compared with the reference system's (tf, or the first that ran) before the table is
written; a disagreement is marked in the table, never dropped.

Called by bench/compare/run.sh (which makes the virtual environment and the Release build);
see bench/README.md.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

import numpy as np

from diff import SYSTEMS, spread as spread_ratio

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LABELS = {"eddy-aot": "eddy AOT", "eddy-jit": "eddy JIT", "eddy-interp": "eddy interp",
          "tf": "TF graph", "xla": "TF XLA", "jax": "JAX jit"}
REFERENCE_ORDER = ["tf", "jax", "xla", "eddy-jit", "eddy-aot", "eddy-interp"]
SYSTEM_TIMEOUT_S = 1800
# `eddy import` + `eddy opt` turn a GraphDef into eddy IR (docs/import.md).
OPT_PASSES = "functionalize,legalize-tf,shape-infer,canonicalize"


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def run_cmd(cmd, timeout=SYSTEM_TIMEOUT_S):
    """Runs cmd; returns (seconds, error text or None)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, "timed out after %d s: %s" % (timeout, " ".join(cmd))
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-8:]
        return dt, "exit %d: %s\n%s" % (p.returncode, " ".join(cmd), "\n".join(tail))
    return dt, None


# ---- eddy: import, compile, build the AOT driver ----------------------------------------


def parse_tensor_type(text):
    """'tensor<32x256xf32>' -> ([32, 256], 'float32'); None for anything else."""
    m = re.fullmatch(r"tensor<(?:([0-9x]*)x)?([a-z0-9]+)>", text.strip())
    if not m:
        return None
    dims = [int(d) for d in m.group(1).split("x")] if m.group(1) else []
    dtypes = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64"}
    return (dims, dtypes[m.group(2)]) if m.group(2) in dtypes else None


def function_args(ir_path, entry):
    """The argument types of func @entry in a textual eddy module."""
    text = open(ir_path).read()
    m = re.search(r"func\.func @%s\((.*?)\) ->" % re.escape(entry), text)
    if not m:
        raise RuntimeError("%s: no function @%s" % (ir_path, entry))
    return [a.split(":", 1)[1].strip() for a in re.split(r",\s*(?=%arg)", m.group(1))]


def aot_link_flags(build):
    """The libraries the in-tree runtime needs, from the eddyrt.pc the build wrote."""
    pc = open(os.path.join(build, "cmake", "eddyrt.pc")).read()
    m = re.search(r"^Libs\.private:(.*)$", pc, re.M)
    return (m.group(1).split() if m else []) + ["-lm", "-pthread", "-ldl"]


def build_aot_driver(build, work, obj, exe):
    """Links the object `eddy compile --prefix bench_model` wrote (its header in work) with
    eddy_driver.c and build's runtime into exe; returns the error text or None."""
    cc = [os.environ.get("CC", "cc"), "-O2", "-std=c11", "-DEDDY_BENCH_AOT", "-I" + work,
          "-I" + ROOT, "-I" + os.path.join(ROOT, "runtime"),
          os.path.join(HERE, "eddy_driver.c"), obj,
          os.path.join(build, "runtime", "libeddy_rt.a")] + aot_link_flags(build) + ["-o", exe]
    return run_cmd(cc)[1]


def prepare_eddy(args, case_dir, manifest, work):
    """Imports, differentiates and compiles the case; returns a dict with the IR, its entry,
    the driver inputs, the AOT binary and the compile times (or an "error")."""
    eddy = os.path.join(args.build, "tools", "eddy")
    feeds = [f["name"] for f in manifest["feeds"]]
    io = []
    for f in feeds:
        io += ["--feed", f]
    for f in manifest["fetches"]:
        io += ["--fetch", f]
    tf_ir = os.path.join(work, "model.tf.eddy")
    ir = os.path.join(work, "model.eddy")
    steps = [("import", [eddy, "import", os.path.join(case_dir, manifest["graph"]), "--prune"]
              + io + ["-o", tf_ir]),
             ("opt", [eddy, "opt", tf_ir, "--passes=" + OPT_PASSES, "-o", ir])]
    entry = "main"
    if manifest["wrt"]:
        grad_ir = os.path.join(work, "model.grad.eddy")
        steps.append(("grad", [eddy, "grad", ir, "--entry", "main", "--wrt",
                               ",".join(manifest["wrt"]), "-o", grad_ir]))
        ir, entry = grad_ir, "main_grad"
    obj = os.path.join(work, "bench_model.o")
    steps.append(("compile", [eddy, "compile", ir, "--entry", entry, "--prefix", "bench_model",
                              "-o", obj, "--header", os.path.join(work, "bench_model.h")]))
    times = {}
    for name, cmd in steps:
        dt, err = run_cmd(cmd)
        if err:
            return {"error": "eddy %s: %s" % (name, err)}
        times[name] = dt
    inputs = [os.path.join(case_dir, f["file"]) for f in manifest["feeds"]]
    if manifest["wrt"]:
        # main_grad(args..., one seed per forward result): seeds of ones make the
        # gradients those of the sum of all forward results, as in models.py.
        types = function_args(ir, entry)[len(inputs):]
        for i, t in enumerate(types):
            parsed = parse_tensor_type(t)
            if parsed is None:
                return {"error": "seed %d: cannot make a %s" % (i, t)}
            path = os.path.join(work, "seed_%d.npy" % i)
            np.save(path, np.ones(parsed[0], parsed[1]))
            inputs.append(path)
    exe = os.path.join(work, "eddy_compare_aot")
    err = build_aot_driver(args.build, work, obj, exe)
    if err:
        return {"error": "building the AOT driver: " + err}
    return {"ir": ir, "entry": entry, "inputs": inputs, "aot": exe, "times": times}


def run_eddy(args, system, prep, out, budget_s):
    if "error" in prep:
        return {"error": prep["error"]}
    mode = system.split("-", 1)[1]
    if mode == "aot":
        cmd = [prep["aot"], "--mode=aot"]
    else:
        cmd = [os.path.join(args.build, "bench", "eddy_compare_driver"), "--mode=" + mode,
               "--ir", prep["ir"], "--entry", prep["entry"]]
    for path in prep["inputs"]:
        cmd += ["--input", path]
    return run_system(cmd + timing_flags(args, budget_s) + ["--out", out], out)


def timing_flags(args, budget_s):
    return ["--min-runs", str(args.min_runs), "--max-runs", str(args.max_runs),
            "--budget-s", "%g" % budget_s, "--warmup-s", str(args.warmup_s)]


def run_rounds(args, systems, prep, case_dir, work, name):
    """Runs every system args.rounds times, one process each, the systems in turn within a
    round, so that a noisy minute of a shared machine falls on all of them alike. Returns
    {system: result}: the result of the system's fastest process (noise only slows a
    process down), with every process's median in "round_medians_s", the largest peak RSS,
    and the first process's outputs in "out" (the ones the agreement is checked on)."""
    budget_s = args.budget_s / args.rounds
    runs = {s: [] for s in systems}
    for k in range(args.rounds):
        for s in systems:
            if runs[s] and "error" in runs[s][-1]:
                continue
            out = os.path.join(work, s if k == 0 else "%s.%d" % (s, k))
            log("%s: %s (round %d of %d)" % (name, s, k + 1, args.rounds))
            if s.startswith("eddy"):
                r = run_eddy(args, s, prep, out, budget_s)
            else:
                r = run_system([sys.executable, os.path.join(HERE, "worker.py"), "--system", s,
                                "--case-dir", case_dir, "--out", out]
                               + timing_flags(args, budget_s), out)
            r["out"] = out
            if "error" in r:
                log("%s: %s failed: %s" % (name, s, r["error"].splitlines()[0]))
            else:
                log("%s: %s median %s" % (name, s, fmt_time(r.get("median_s"))))
            runs[s].append(r)
    results = {}
    for s, rs in runs.items():
        failed = [r for r in rs if "error" in r]
        if failed:
            results[s] = failed[0]
            continue
        best = dict(min(rs, key=lambda r: r["median_s"]))
        best["round_medians_s"] = [r["median_s"] for r in rs]
        rss = [r["peak_rss_mb"] for r in rs if r.get("peak_rss_mb")]
        if rss:
            best["peak_rss_mb"] = max(rss)
        best["out"] = rs[0]["out"]
        results[s] = best
    return results


def run_system(cmd, out):
    os.makedirs(out, exist_ok=True)
    dt, err = run_cmd(cmd)
    path = os.path.join(out, "result.json")
    res = json.load(open(path)) if os.path.exists(path) else {}
    if err:
        res.setdefault("error", err)
    res["wall_s"] = dt
    return res


# ---- Agreement --------------------------------------------------------------------------


def compare(manifest, ref_dir, dir_):
    """Max abs difference of each output and whether all are within tolerance."""
    worst, ok, notes = 0.0, True, []
    for i, o in enumerate(manifest["outputs"]):
        a = np.load(os.path.join(ref_dir, "out_%d.npy" % i))
        p = os.path.join(dir_, "out_%d.npy" % i)
        if not os.path.exists(p):
            return {"agree": False, "max_abs": None, "note": "no output %d" % i}
        b = np.load(p)
        if a.shape != b.shape:
            return {"agree": False, "max_abs": None,
                    "note": "output %s: shape %s, reference %s" % (o["name"], b.shape, a.shape)}
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        diff = float(np.max(np.abs(a64 - b64))) if a.size else 0.0
        worst = max(worst, diff)
        if not np.allclose(b64, a64, rtol=o["rtol"], atol=o["atol"], equal_nan=True):
            ok = False
            notes.append("%s: max |diff| %.3g (rtol %g, atol %g)" % (
                o["name"], diff, o["rtol"], o["atol"]))
    return {"agree": ok, "max_abs": worst, "note": "; ".join(notes)}


# ---- Report -----------------------------------------------------------------------------


def fmt_time(s):
    if s is None:
        return "-"
    if s >= 1:
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.2f ms" % (s * 1e3)
    return "%.1f us" % (s * 1e6)


def proc_field(path, key):
    """The value of the first 'key: value' line of a /proc file, or ''."""
    try:
        for line in open(path):
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def machine_info():
    model = proc_field("/proc/cpuinfo", "model name") or "unknown CPU"
    cpuflags = proc_field("/proc/cpuinfo", "flags").split()
    flags = ", ".join(f for f in ("avx2", "fma", "avx512f") if f in cpuflags)
    mem = int((proc_field("/proc/meminfo", "MemTotal").split() or ["0"])[0])
    return "%s, %d cores (%s), %.0f GiB memory, %s" % (
        model, os.cpu_count() or 0, flags, mem / 2 ** 20, platform.platform())


def eddy_version():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" with local changes" if dirty else "")
    except OSError:
        return "unknown"


def cell(case, system):
    r = case["systems"].get(system)
    if r is None:
        return "not run"
    if "error" in r:
        return "failed"
    base = case["systems"].get("eddy-aot", {}).get("median_s")
    text = fmt_time(r["median_s"])
    if base and system != "eddy-aot":
        text += " (%.2fx)" % (r["median_s"] / base)
    agree = r.get("agreement")
    if agree is not None and not agree["agree"]:
        text += " **DISAGREES**"
    return text


def spread(case, system):
    r = case["systems"].get(system) or {}
    n = len(r.get("times_s") or [])
    if not n or not r.get("median_s"):
        return "-"
    text = "%.0f%% (%d)" % (100 * spread_ratio(r), n)
    medians = r.get("round_medians_s") or []
    if len(medians) > 1:
        text += ", %.0f%%" % (100 * (max(medians) - min(medians)) / min(medians))
    return text


def system_table(L, title, intro, cases, fn, extra=None):
    """A table of one row per case and one column per system, fn(case, system) in each
    cell; extra = (header, fn(case)) adds a last column."""
    L.append("## %s\n" % title)
    if intro:
        L.append(intro + "\n")
    L.append("| case | " + " | ".join(LABELS[s] for s in SYSTEMS) +
             (" | %s" % extra[0] if extra else "") + " |")
    L.append("|---" * (len(SYSTEMS) + (2 if extra else 1)) + "|")
    for c in cases:
        L.append("| %s | %s%s |" % (c["case"], " | ".join(fn(c, s) for s in SYSTEMS),
                                    " | " + extra[1](c) if extra else ""))
    L.append("")


def write_markdown(path, results):
    cases = results["cases"]
    L = []
    L.append("# eddy side by side with TensorFlow and JAX\n")
    L.append("Written by `bench/compare/run.sh` (bench/README.md says how to rerun it and what "
             "the numbers mean). Do not edit by hand.\n")
    L.append("- Date: %s" % results["date"])
    L.append("- Machine: %s" % results["machine"])
    L.append("- Versions: %s" % ", ".join("%s %s" % kv for kv in results["versions"].items()))
    rounds = results.get("rounds", 1)
    L.append("- Timing: each system in %d process%s on the same inputs, the systems in turn "
             "(round 1 of every system, then round 2, ...); in each process untimed warm-up "
             "calls for %g s (at least one), then the median of %d to %d timed calls (more "
             "while under %.3g s of timed calls). A system's time is its fastest process's "
             "median: a busy minute of a shared machine only slows a process down. Ratios "
             "are to eddy AOT (higher: slower than eddy AOT)."
             % (rounds, "es" if rounds > 1 else "", results.get("warmup_s", 0),
                results["min_runs"], results["max_runs"],
                results["budget_s"] / rounds))
    L.append("- Threads: every system with its defaults on this machine (eddy's compiled code "
             "runs on the calling thread and splits its f32 products across the runtime "
             "context's threads, one per core, OpenBLAS and the interpreter use every core; "
             "TensorFlow's and XLA's intra-op pools and JAX's use every core).")
    for note in results.get("notes", []):
        L.append("- " + note)
    L.append("")
    system_table(L, "Median time per call (ratio to eddy AOT)", None, cases, cell,
                 ("JAX as", lambda c: c["manifest"].get("jax_note", "").split(" (")[0]))
    system_table(L, "Spread of the timed calls",
                 "(slowest - fastest) / median of the timed calls of each system's fastest "
                 "process, and their number; then (slowest - fastest) / fastest of its "
                 "processes' medians: how far one median can be trusted on this machine.",
                 cases, spread)
    system_table(L, "Peak resident memory of each process (MB)", None, cases,
                 lambda c, s: "%.0f" % c["systems"][s]["peak_rss_mb"]
                 if (c["systems"].get(s) or {}).get("peak_rss_mb") else "-")
    L.append("## Compile time\n")
    L.append("eddy CLI: `eddy import` + `eddy opt` (+ `eddy grad`) + `eddy compile` to an object, "
             "wall time of the processes; eddy JIT: `eddy_cpu_jit_create` in the driver; "
             "TF XLA: first call minus a steady call; JAX: `jit(f).lower(...).compile()`.\n")
    L.append("| case | eddy CLI (import+opt+grad+compile) | eddy JIT | TF XLA | JAX |")
    L.append("|---|---|---|---|---|")
    for c in cases:
        cli = c.get("eddy_compile", {})
        cli_s = "%.2f s (%s)" % (sum(cli.values()), ", ".join(
            "%s %.2f" % kv for kv in cli.items())) if cli else "-"
        comp = []
        for s in ("eddy-jit", "xla", "jax"):
            r = c["systems"].get(s) or {}
            comp.append(fmt_time(r.get("compile_s")) if r.get("compile_s") is not None else "-")
        L.append("| %s | %s | %s |" % (c["case"], cli_s, " | ".join(comp)))
    L.append("")
    L.append("## Agreement\n")
    L.append("Every system's first-call results against the reference system's (%s), "
             "elementwise within the case's tolerance (`|x - ref| <= atol + rtol |ref|`). "
             "Largest absolute difference over all outputs:\n" % "TF graph unless it failed")
    L.append("| case | reference | " + " | ".join(LABELS[s] for s in SYSTEMS) + " |")
    L.append("|---" * (len(SYSTEMS) + 2) + "|")
    for c in cases:
        row = []
        for s in SYSTEMS:
            r = c["systems"].get(s) or {}
            a = r.get("agreement")
            if a is None:
                row.append("-" if s != c.get("reference") else "reference")
            elif a["max_abs"] is None:
                row.append("DISAGREES: " + a["note"])
            else:
                row.append("%.2g%s" % (a["max_abs"], "" if a["agree"] else " DISAGREES: " + a["note"]))
        L.append("| %s | %s | %s |" % (c["case"], LABELS.get(c.get("reference"), "-"), " | ".join(row)))
    L.append("")
    L.append("## Cases\n")
    for c in cases:
        m = c["manifest"]
        L.append("- `%s`: %s.%s" % (c["case"], m.get("description", ""),
                                   (" JAX: %s." % m["jax_note"]) if m.get("jax_note") else ""))
    failures = [(c["case"], s, r["error"]) for c in cases for s, r in c["systems"].items()
                if r and "error" in r]
    if failures:
        L.append("\n## Failures\n")
        for case, s, err in failures:
            first = err.strip().splitlines()
            L.append("- `%s`, %s: %s" % (case, LABELS[s], " / ".join(first[-3:])[:400]))
    open(path, "w").write("\n".join(L) + "\n")


def write_plot(path, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plot")
        return
    cases = results["cases"]
    others = [s for s in SYSTEMS if s != "eddy-aot"]
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(cases)), 5.5))
    width = 0.8 / len(others)
    for k, s in enumerate(others):
        xs, ys = [], []
        for i, c in enumerate(cases):
            base = c["systems"].get("eddy-aot", {}).get("median_s")
            r = c["systems"].get(s) or {}
            if base and r.get("median_s"):
                xs.append(i + (k - (len(others) - 1) / 2) * width)
                ys.append(r["median_s"] / base)
        ax.bar(xs, ys, width, label=LABELS[s])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([c["case"] for c in cases], rotation=35, ha="right")
    ax.set_ylabel("time / eddy AOT time (log scale; > 1: slower than eddy AOT)")
    ax.set_title("eddy vs TensorFlow and JAX, median time per call (%s)" % results["date"][:10])
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---- Main -------------------------------------------------------------------------------


def versions(case_manifests):
    v = {"eddy": eddy_version()}
    m = case_manifests[0] if case_manifests else {}
    v["tensorflow"] = m.get("tensorflow", "-")
    v["jax"] = m.get("jax", "-")
    v["numpy"] = np.__version__
    try:
        out = subprocess.run(["llvm-config-19", "--version"], capture_output=True, text=True)
        v["LLVM/MLIR"] = out.stdout.strip() or "19"
    except OSError:
        v["LLVM/MLIR"] = "19"
    v["python"] = platform.python_version()
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"),
                    help="eddy's Release build directory (eddy, eddy_compare_driver, eddy_rt built)")
    ap.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                   "eddy-bench", "work"),
                    help="scratch directory (exported models, objects, outputs)")
    ap.add_argument("--only", action="append", default=[], help="run only this case; repeatable")
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help="comma-separated subset of " + ",".join(SYSTEMS))
    ap.add_argument("--small", action="store_true", help="tiny sizes (a smoke test)")
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--max-runs", type=int, default=20)
    ap.add_argument("--budget-s", type=float, default=10.0,
                    help="seconds of timed calls per system, shared by its rounds")
    ap.add_argument("--rounds", type=int, default=3,
                    help="processes per system, run in turn with the other systems'; a "
                    "system's time is its fastest process's median")
    ap.add_argument("--warmup-s", type=float, default=1.0,
                    help="untimed calls after the first until this long (each system alike)")
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"),
                    help="output path without extension: PATH.md, PATH.json, PATH.png")
    ap.add_argument("--note", action="append", default=[],
                    help="a line for the report's header (e.g. a framework that did not install)")
    args = ap.parse_args()
    systems = [s for s in args.systems.split(",") if s]
    for s in systems:
        if s not in SYSTEMS:
            ap.error("unknown system '%s' (known: %s)" % (s, ", ".join(SYSTEMS)))
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    for tool in (os.path.join(args.build, "tools", "eddy"),
                 os.path.join(args.build, "bench", "eddy_compare_driver")):
        if any(s.startswith("eddy") for s in systems) and not os.path.exists(tool):
            sys.exit("run.py: %s is missing: build eddy first (bench/compare/run.sh does)" % tool)

    cases_dir = os.path.join(args.work, "cases")
    if os.path.isdir(args.work):
        shutil.rmtree(args.work)
    os.makedirs(cases_dir)
    export = [sys.executable, os.path.join(HERE, "models.py"), "--out", cases_dir]
    for c in args.only:
        export += ["--only", c]
    if args.small:
        export.append("--small")
    log("exporting the models")
    dt, err = run_cmd(export)
    if err:
        sys.exit("run.py: exporting the models failed: " + err)
    # In the order models.py defines them.
    listed = subprocess.run([sys.executable, os.path.join(HERE, "models.py"), "--list"],
                            capture_output=True, text=True).stdout.split()
    exported = set(os.listdir(cases_dir))
    names = [n for n in listed if n in exported] + sorted(exported - set(listed))
    results = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "machine": machine_info(), "min_runs": args.min_runs, "max_runs": args.max_runs,
               "budget_s": args.budget_s, "rounds": args.rounds, "warmup_s": args.warmup_s,
               "small": args.small, "notes": list(args.note),
               "cases": []}
    if args.small:
        results["notes"].append("--small: tiny sizes, a smoke test; not for comparison")
    manifests = []
    for name in names:
        case_dir = os.path.join(cases_dir, name)
        manifest = json.load(open(os.path.join(case_dir, "manifest.json")))
        manifests.append(manifest)
        work = os.path.join(args.work, "runs", name)
        os.makedirs(work)
        case = {"case": name, "manifest": manifest, "systems": {}}
        if any(s.startswith("eddy") for s in systems):
            log("%s: eddy import and compile" % name)
            prep = prepare_eddy(args, case_dir, manifest, work)
            if "times" in prep:
                case["eddy_compile"] = prep["times"]
        else:
            prep = None
        case["systems"] = run_rounds(args, systems, prep, case_dir, work, name)
        ok = [s for s in REFERENCE_ORDER if s in case["systems"]
              and "error" not in case["systems"][s]]
        if ok:
            case["reference"] = ok[0]
            ref_out = case["systems"][ok[0]]["out"]
            for s in ok[1:]:
                a = compare(manifest, ref_out, case["systems"][s]["out"])
                case["systems"][s]["agreement"] = a
                if not a["agree"]:
                    log("%s: %s DISAGREES with %s: %s" % (name, s, ok[0], a["note"]))
        results["cases"].append(case)
    results["versions"] = versions(manifests)
    base = args.results
    with open(base + ".json", "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")
    write_markdown(base + ".md", results)
    write_plot(base + ".png", results)
    log("wrote %s.md, %s.json, %s.png" % (base, base, base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
