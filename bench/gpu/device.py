#!/usr/bin/env python3
"""eddy's CUDA target on a GPU machine, from an unpacked bench/gpu/bundle.sh archive.

  device.py BUNDLE [--phases fixtures,lit,loops,cases,chain] [--out DIR]

Phases (each skipped when the bundle lacks what it needs):
  fixtures  every TensorFlow fixture, compiled for CUDA, against TensorFlow's outputs
            with the fixture's tolerance;
  lit       the lit programs (tests/lit/gpu/programs.test's compiled runs), each run
            against the evaluator's results: floats within rtol 1e-5 (atol 1e-6),
            integers and bools equal; a run the evaluator fails must fail with the CPU
            target's message (file paths aside; for a gather, the index may be another
            out-of-range one);
  loops     loop_scalar's compiled program at 10^4, 10^5 and 10^6 iterations, and at
            10^5 iterations on a 1 MB stack: the host code's stack must not grow with the
            trip count (it did, and loops crashed); time per iteration and peak memory;
  cases     every bench/compare case, eddy beside JAX jit on the same GPU, JAX at
            float32 ("highest") matmul precision; outputs compared;
  chain     the fused elementwise chain on 64M f32: time per iteration and bandwidth,
            against a device copy of the same bytes (torch, when present).

Writes DIR/results.json and DIR/results.md (tables for bench/README.md); DIR defaults to
$OUT or ./gpu-results. The runs' inputs and outputs go to --scratch (/tmp/eddy-gpu-scratch). Needs numpy; JAX and torch only for their columns. Exits 1 when a
fixture, a lit run or a loop check fails.

bundle.sh also calls it, without numpy, as
  device.py --write-seeds IR ENTRY DIR
to record the seed arguments of a gradient case (DIR/seeds.json: shapes and dtypes).
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "i64": "int64"}


def write_seeds(ir, entry, d):
    """The arguments of ENTRY after the forward feeds: the gradient's seeds."""
    text = open(ir).read()
    feeds = len(json.load(open(os.path.join(d, "manifest.json")))["feeds"])
    sig = re.search(r"func\.func @%s\((.*?)\) ->" % re.escape(entry), text, re.S).group(1)
    types = re.findall(r":\s*tensor<([^>]*)>", sig)[feeds:]
    seeds = []
    for t in types:
        parts = t.split("x")
        seeds.append({"shape": [int(p) for p in parts[:-1]], "dtype": DTYPES[parts[-1]]})
    json.dump(seeds, open(os.path.join(d, "seeds.json"), "w"))


if len(sys.argv) > 1 and sys.argv[1] == "--write-seeds":
    write_seeds(*sys.argv[2:5])
    sys.exit(0)

import argparse  # noqa: E402

import numpy as np  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("bundle")
ap.add_argument("--phases", default="fixtures,lit,loops,cases,chain")
ap.add_argument("--max-trips", type=int, default=10**6,
                help="the longest loop of the loops phase")
ap.add_argument("--out", default=os.environ.get("OUT", "gpu-results"))
ap.add_argument("--scratch", default="/tmp/eddy-gpu-scratch",
                help="where inputs and outputs of the runs go (large)")
A = ap.parse_args()
B = os.path.abspath(A.bundle)
PHASES = A.phases.split(",")
os.makedirs(A.out, exist_ok=True)
SCRATCH = A.scratch
results = {"device": "", "fixtures": {}, "lit": {}, "loops": [], "cases": {}, "chain": {}}
failures = 0


def say(*a):
    print(*a, flush=True)


def run_driver(exe, inputs, out, runs=(1, 1), budget=1.0, timeout=600, stack_kb=None):
    """One driver process (bench/compare/eddy_driver.c); its result.json, or an error."""
    os.makedirs(out, exist_ok=True)
    cmd = [exe, "--mode=aot", "--out", out, "--min-runs", str(runs[0]),
           "--max-runs", str(runs[1]), "--budget-s", str(budget)]
    for i in inputs:
        cmd += ["--input", i]
    if stack_kb:
        cmd = ["bash", "-c", 'ulimit -s %d && exec "$@"' % stack_kb, "run"] + cmd
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after %d s" % timeout}
    try:
        r = json.load(open(os.path.join(out, "result.json")))
    except (OSError, ValueError):
        r = {}
    if p.returncode != 0:
        sig = " (signal %d)" % -p.returncode if p.returncode < 0 else ""
        r["error"] = ((p.stderr or p.stdout).strip()[-400:] or "exit %d" % p.returncode) + sig
    return r


def compare(got, ref, rtol, atol):
    if got.shape != ref.shape:
        return False, "shape %s, expected %s" % (got.shape, ref.shape)
    if got.dtype.kind not in "fc":
        ok = np.array_equal(got, ref)
        return ok, "equal" if ok else "integers differ"
    g, r = got.astype(np.float64), ref.astype(np.float64)
    # Equal values (infinities included) and NaN against NaN agree; other
    # non-finite values differ (an infinite error).
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    fin = np.isfinite(g) & np.isfinite(r)
    with np.errstate(invalid="ignore"):
        err = np.where(same, 0.0, np.where(fin, np.abs(g - r), np.inf))
    bad = ~(same | (fin & (err <= atol + rtol * np.abs(r))))
    worst = float(np.max(err)) if err.size else 0.0
    if bad.any():
        return False, "max error %.3g, %d of %d elements out of tolerance" % (
            worst, int(bad.sum()), err.size)
    return True, "max error %.3g" % worst


def inputs_of(d, m):
    return [os.path.join(d, f["file"]) for f in m["feeds"]]


def phase_fixtures():
    global failures
    dirs = sorted(glob.glob(os.path.join(B, "fx", "*")))
    if not dirs:
        return
    say("== fixtures: compiled for CUDA, against TensorFlow's outputs")
    passed = 0
    for d in dirs:
        n = os.path.basename(d)
        m = json.load(open(os.path.join(d, "manifest.json")))
        tol = m.get("tolerance", {"rtol": 1e-5, "atol": 1e-6})
        out = os.path.join(SCRATCH, "fx", n)
        r = run_driver(os.path.join(d, "run"), inputs_of(d, m), out)
        if "error" in r:
            ok, why = False, r["error"]
        else:
            checks = [compare(np.load(os.path.join(out, "out_%d.npy" % i)),
                              np.load(os.path.join(d, f["file"])), tol["rtol"], tol["atol"])
                      for i, f in enumerate(m["fetches"])]
            ok = all(c[0] for c in checks)
            why = "; ".join(c[1] for c in checks)
        passed += ok
        failures += not ok
        results["fixtures"][n] = {"ok": ok, "detail": why}
        say("%s %-28s %s" % ("ok  " if ok else "FAIL", n, why))
    say("fixtures: %d of %d match TensorFlow" % (passed, len(dirs)))


def error_text(msg):
    """An error message without the reporter's prefix and with file names for paths."""
    msg = msg.strip().splitlines()[0] if msg.strip() else ""
    for prefix in ("eddy_compare_driver: ", "error: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return re.sub(r"\S*/([^/\s]+:\d+:\d+)", r"\1", msg)


def same_error(got, want):
    """(matches, how): the messages equal, or differ only in a gather's index (on a
    device, any out-of-range index of the kernel may be reported; docs/gpu.md)."""
    g, w = error_text(got), error_text(want)
    if g == w:
        return True, "same error"
    if "'core.gather'" in w:
        mask = lambda t: re.sub(r"index -?\d+", "index N", t)  # noqa: E731
        if mask(g) == mask(w):
            return True, "same error, another index"
    return False, "error %r, expected %r" % (g, w)


def phase_lit():
    global failures
    progs = sorted(glob.glob(os.path.join(B, "lit", "*", "program.json")))
    if not progs:
        return
    say("== lit: the lit programs compiled, against the evaluator")
    rtol, atol = 1e-5, 1e-6
    passed = total = 0
    worst = 0.0
    for pj in progs:
        d = os.path.dirname(pj)
        p = json.load(open(pj))
        for run in p["runs"]:
            n = "%s/%s" % (os.path.basename(d), run)
            c = json.load(open(os.path.join(d, run, "case.json")))
            out = os.path.join(SCRATCH, "lit", n)
            r = run_driver(os.path.join(d, "run"),
                           [os.path.join(d, run, i) for i in c["inputs"]], out,
                           timeout=120)
            total += 1
            if "no CUDA device" in r.get("error", ""):
                # Nothing runs without a device: one line, not one per run.
                failures += 1
                results["lit"]["no device"] = {"ok": False, "detail": error_text(r["error"])}
                say("lit: not run: %s" % error_text(r["error"]))
                return
            if "error" in c:
                if "error" in r:
                    ok, why = same_error(r["error"], c["error"])
                else:
                    ok, why = False, "ran, expected the error %r" % error_text(c["error"])
            elif "error" in r:
                ok, why = False, r["error"]
            else:
                checks = []
                for i in range(c["outputs"]):
                    got = np.load(os.path.join(out, "out_%d.npy" % i))
                    ref = np.load(os.path.join(d, run, "expected", "%d.npy" % i))
                    if got.dtype != ref.dtype:
                        checks.append((False, "result %d is %s, expected %s" % (
                            i, got.dtype, ref.dtype)))
                        continue
                    checks.append(compare(got, ref, rtol, atol))
                    if checks[-1][0] and got.dtype.kind in "fc" and got.size:
                        g, e = got.astype(np.float64), ref.astype(np.float64)
                        fin = np.isfinite(e) & np.isfinite(g)
                        if fin.any():
                            worst = max(worst, float(np.max(np.abs(g - e)[fin])))
                ok = all(k[0] for k in checks)
                why = "; ".join(k[1] for k in checks) or "no results"
            passed += ok
            failures += not ok
            results["lit"][n] = {"ok": ok, "detail": why, "command": c["command"]}
            say("%s %-40s %s" % ("ok  " if ok else "FAIL", n, why))
    results["lit_max_error"] = worst
    say("lit programs: %d of %d match the evaluator (largest error %.3g)" % (
        passed, total, worst))


def case_arrays(d, m):
    """A case's inputs, made again from models.py with its seeds, and its seed arguments."""
    sys.path.insert(0, B)
    import models
    arrays = [a for _, a in models.case_inputs(models.CASES[m["case"]], False)]
    seeds = []
    sp = os.path.join(d, "seeds.json")
    if os.path.exists(sp):
        seeds = [np.ones(s["shape"], s["dtype"]) for s in json.load(open(sp))]
    return arrays, seeds


def save_inputs(d, arrays):
    paths = []
    for i, a in enumerate(arrays):
        p = os.path.join(SCRATCH, "in", os.path.basename(d), "in_%d.npy" % i)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        np.save(p, a)
        paths.append(p)
    return paths


def phase_loops():
    global failures
    d = os.path.join(B, "cases", "loop_scalar")
    if not os.path.exists(os.path.join(d, "run")):
        return
    say("== loops: loop_scalar's host code at growing trip counts")
    m = json.load(open(os.path.join(d, "manifest.json")))
    arrays, _ = case_arrays(d, m)
    for trips, stack_kb in ((10**4, None), (10**5, None), (10**6, None), (10**5, 1024)):
        if trips > A.max_trips:
            continue
        arrays[-1] = np.array(trips, arrays[-1].dtype)
        ins = save_inputs(d, arrays)
        t0 = time.time()
        r = run_driver(os.path.join(d, "run"), ins, os.path.join(SCRATCH, "loops"),
                       stack_kb=stack_kb)
        wall = time.time() - t0
        row = {"trips": trips, "stack_kb": stack_kb, "ok": "error" not in r,
               "median_s": r.get("median_s"), "peak_rss_mb": r.get("peak_rss_mb"),
               "wall_s": wall, "error": r.get("error")}
        failures += not row["ok"]
        results["loops"].append(row)
        stack = "%d KB stack" % stack_kb if stack_kb else "default stack"
        if row["ok"]:
            say("ok   %8d iterations, %s: call %.3f s, peak RSS %.0f MB" % (
                trips, stack, row["median_s"], row["peak_rss_mb"] or -1))
        else:
            say("FAIL %8d iterations, %s: %s" % (trips, stack, row["error"]))
    # The cost of one iteration, without the call's fixed costs (copies in and out).
    rows = [r for r in results["loops"] if r["stack_kb"] is None]
    if len(rows) < 2:
        return
    a, b = rows[0], rows[1]
    if a["ok"] and b["ok"]:
        results["loop_iteration_s"] = (b["median_s"] - a["median_s"]) / (b["trips"] - a["trips"])
        say("loop_scalar: %.1f us per iteration" % (1e6 * results["loop_iteration_s"]))


def run_jax(d, out, highest):
    """worker.py's JAX timing of case directory d: at "highest" matmul precision (float32),
    or at JAX's default (TF32 on Ampere and Hopper)."""
    env = dict(os.environ)
    env.pop("JAX_DEFAULT_MATMUL_PRECISION", None)
    if highest:
        env["JAX_DEFAULT_MATMUL_PRECISION"] = "highest"
    os.makedirs(out, exist_ok=True)
    try:
        subprocess.run([sys.executable, os.path.join(B, "worker.py"), "--system", "jax",
                        "--case-dir", d, "--out", out, "--min-runs", "3", "--max-runs", "10",
                        "--budget-s", "3"], capture_output=True, text=True, timeout=300, env=env)
        return json.load(open(os.path.join(out, "result.json")))
    except (OSError, ValueError, subprocess.TimeoutExpired) as ex:
        return {"error": str(ex)}


def max_rel_diff(dir_a, dir_b, count):
    """The largest |a - b| / max(|b|, 1e-3) over the outputs of two runs."""
    worst = 0.0
    for i in range(count):
        a = np.load(os.path.join(dir_a, "out_%d.npy" % i)).astype(np.float64)
        b = np.load(os.path.join(dir_b, "out_%d.npy" % i)).astype(np.float64)
        if a.size:
            worst = max(worst, float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-3))))
    return worst


def phase_cases():
    dirs = sorted(glob.glob(os.path.join(B, "cases", "*")))
    if not dirs:
        return
    say("== cases: eddy CUDA beside JAX jit (highest matmul precision), same GPU")
    for d in dirs:
        n = os.path.basename(d)
        m = json.load(open(os.path.join(d, "manifest.json")))
        arrays, seeds = case_arrays(d, m)
        if n.startswith("loop_"):
            arrays[-1] = np.array(10**4, arrays[-1].dtype)
        ins = save_inputs(d, arrays + seeds)
        # worker.py reads the case's inputs from its directory.
        for i, p in enumerate(ins[:len(arrays)]):
            np.save(os.path.join(d, m["feeds"][i]["file"]), np.load(p))
        eo = os.path.join(SCRATCH, "eddy", n)
        e = run_driver(os.path.join(d, "run"), ins, eo, runs=(3, 10), budget=3.0)
        jo = os.path.join(SCRATCH, "jax", n)
        j = run_jax(d, jo, True)
        agree = []
        if "error" not in e and "error" not in j:
            for i, o in enumerate(m["outputs"]):
                ok, why = compare(np.load(os.path.join(eo, "out_%d.npy" % i)),
                                  np.load(os.path.join(jo, "out_%d.npy" % i)),
                                  10 * o["rtol"], 10 * o["atol"])
                agree.append({"output": o["name"], "ok": ok, "detail": why})
        results["cases"][n] = {"eddy": e, "jax": j, "agree": agree}
        em, jm = e.get("median_s"), j.get("median_s")
        say("%-16s eddy %-12s jax %-12s eddy/jax %-7s %s" % (
            n, "%.3f ms" % (1e3 * em) if em else "ERROR",
            "%.3f ms" % (1e3 * jm) if jm else "ERROR",
            "%.2fx" % (em / jm) if em and jm else "-",
            e.get("error") or j.get("error") or
            ("agree" if all(a["ok"] for a in agree) else "DISAGREE " + str(agree))))
        # TF32 products: eddy --gpu-matmul-precision=tf32 beside JAX's default precision,
        # each output's largest relative difference from eddy's float32 result.
        if not os.path.exists(os.path.join(d, "run-tf32")) or "error" in e:
            continue
        to, tj = os.path.join(SCRATCH, "eddy-tf32", n), os.path.join(SCRATCH, "jax-tf32", n)
        e32 = run_driver(os.path.join(d, "run-tf32"), ins, to, runs=(3, 10), budget=3.0)
        j32 = run_jax(d, tj, False)
        row = {"eddy": e32, "jax": j32}
        count = len(m["outputs"])
        if "error" not in e32:
            row["eddy_rel_diff"] = max_rel_diff(to, eo, count)
        if "error" not in j32:
            row["jax_rel_diff"] = max_rel_diff(tj, eo, count)
        results["cases"][n]["tf32"] = row
        em, jm = e32.get("median_s"), j32.get("median_s")
        say("%-16s tf32: eddy %-12s jax %-12s eddy/jax %-7s rel. diff from float32: "
            "eddy %s, jax %s" % (
                n, "%.3f ms" % (1e3 * em) if em else "ERROR",
                "%.3f ms" % (1e3 * jm) if jm else "ERROR",
                "%.2fx" % (em / jm) if em and jm else "-",
                "%.2g" % row["eddy_rel_diff"] if "eddy_rel_diff" in row else "-",
                "%.2g" % row["jax_rel_diff"] if "jax_rel_diff" in row else "-"))


def phase_chain():
    global failures
    d = os.path.join(B, "micro", "chain")
    if not os.path.exists(os.path.join(d, "run")):
        return
    say("== chain: tanh(x*0.5 + 0.25) * 0.9 on 64M f32, per iteration")
    n_elems = 1 << 26
    x = os.path.join(SCRATCH, "chain_x.npy")
    np.save(x, np.full([n_elems], 0.5, np.float32))
    # Enough iterations that the call's copies in and out (PCIe, some ms, and
    # noisy) are small beside them.
    trips_hi = 200
    med = {}
    for trips in (0, trips_hi):
        p = os.path.join(SCRATCH, "chain_n%d.npy" % trips)
        np.save(p, np.array(trips, np.int64))
        r = run_driver(os.path.join(d, "run"), [x, p], os.path.join(SCRATCH, "chain%d" % trips),
                       runs=(3, 5), budget=5.0)
        med[trips] = r.get("median_s")
        if med[trips] is None:
            say("chain: %s" % r.get("error"))
            return
    # The result against numpy's float32 iteration (on a slice: every element is the same).
    v = np.full([1024], 0.5, np.float32)
    for _ in range(trips_hi):
        v = (np.tanh(v * np.float32(0.5) + np.float32(0.25)) * np.float32(0.9)).astype(np.float32)
    got = np.load(os.path.join(SCRATCH, "chain%d" % trips_hi, "out_0.npy"))
    ok, why = compare(got, np.full(got.shape, v[0], np.float32), 1e-5, 1e-6)
    results["chain"]["result"] = why
    if not ok:
        failures += 1
        say("chain: FAIL: the result differs from numpy's: %s" % why)
        return
    per = (med[trips_hi] - med[0]) / trips_hi
    gbps = 2 * 4 * n_elems / per / 1e9
    results["chain"].update({"iteration_s": per, "GBps": gbps, "trips": trips_hi})
    say("chain: %.1f us/iteration, %.0f GB/s read+written" % (1e6 * per, gbps))
    try:
        import torch
        a = torch.empty(n_elems, device="cuda")
        b = torch.empty_like(a)
        for _ in range(3):
            b.copy_(a)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(50):
            b.copy_(a)
        torch.cuda.synchronize()
        copy = 2 * 4 * n_elems / ((time.perf_counter() - t0) / 50) / 1e9
        results["chain"]["copy_GBps"] = copy
        say("device copy of the same bytes (torch): %.0f GB/s; chain at %.0f%% of it" % (
            copy, 100 * gbps / copy))
    except Exception as ex:  # torch is optional
        say("device copy: not measured (%s)" % ex)


def write_markdown():
    lines = ["Device: %s" % results["device"], ""]
    fx = results["fixtures"]
    if fx:
        lines += ["TensorFlow fixtures compiled for CUDA: %d of %d match TensorFlow." % (
            sum(v["ok"] for v in fx.values()), len(fx))]
        lines += ["- %s: %s" % (k, v["detail"]) for k, v in fx.items() if not v["ok"]]
        lines.append("")
    lit = results["lit"]
    if "no device" in lit:
        lines += ["Lit programs: not run: %s" % lit["no device"]["detail"], ""]
    elif lit:
        lines += ["Lit programs compiled for CUDA: %d of %d match the evaluator (largest "
                  "error %.3g; a run the evaluator fails must fail as on the CPU)." % (
                      sum(v["ok"] for v in lit.values()), len(lit),
                      results.get("lit_max_error", 0.0))]
        lines += ["- %s: %s (`%s`)" % (k, v["detail"], v["command"])
                  for k, v in lit.items() if not v["ok"]]
        lines.append("")
    if results["loops"]:
        lines += ["| loop_scalar iterations | stack | result | time of a call | peak RSS |",
                  "|---|---|---|---|---|"]
        for r in results["loops"]:
            lines.append("| %d | %s | %s | %s | %s |" % (
                r["trips"], "%d KB" % r["stack_kb"] if r["stack_kb"] else "default",
                "ok" if r["ok"] else "FAILED: " + (r["error"] or "")[-80:],
                "%.3g s" % r["median_s"] if r["ok"] else "-",
                "%.0f MB" % r["peak_rss_mb"] if r.get("peak_rss_mb") else "-"))
        if "loop_iteration_s" in results:
            lines.append("")
            lines.append("loop_scalar: %.1f us per iteration (10^5 minus 10^4 iterations)." %
                         (1e6 * results["loop_iteration_s"]))
        lines.append("")
    if results["cases"]:
        lines += ["| case | eddy CUDA | JAX GPU | eddy / JAX | outputs |", "|---|---|---|---|---|"]
        for n, c in results["cases"].items():
            em, jm = c["eddy"].get("median_s"), c["jax"].get("median_s")
            lines.append("| %s | %s | %s | %s | %s |" % (
                n, "%.3g ms" % (1e3 * em) if em else "error",
                "%.3g ms" % (1e3 * jm) if jm else "error",
                "%.2fx" % (em / jm) if em and jm else "-",
                "agree" if c["agree"] and all(a["ok"] for a in c["agree"]) else
                "DISAGREE" if c["agree"] else "-"))
        lines.append("")
        tf32 = {n: c["tf32"] for n, c in results["cases"].items() if "tf32" in c}
        if tf32:
            lines += ["TF32 products (eddy `--gpu-matmul-precision=tf32`, JAX's default "
                      "precision); relative difference from eddy's float32 outputs:", "",
                      "| case | eddy CUDA tf32 | JAX GPU default | eddy / JAX | eddy diff | "
                      "JAX diff |", "|---|---|---|---|---|---|"]
            for n, c in tf32.items():
                em, jm = c["eddy"].get("median_s"), c["jax"].get("median_s")
                lines.append("| %s | %s | %s | %s | %s | %s |" % (
                    n, "%.3g ms" % (1e3 * em) if em else "error",
                    "%.3g ms" % (1e3 * jm) if jm else "error",
                    "%.2fx" % (em / jm) if em and jm else "-",
                    "%.2g" % c["eddy_rel_diff"] if "eddy_rel_diff" in c else "-",
                    "%.2g" % c["jax_rel_diff"] if "jax_rel_diff" in c else "-"))
            lines.append("")
    if results["chain"]:
        c = results["chain"]
        lines.append("Chain on 64M f32: %.1f us per iteration, %.0f GB/s%s." % (
            1e6 * c["iteration_s"], c["GBps"],
            ", %.0f%% of a device copy (%.0f GB/s)" % (100 * c["GBps"] / c["copy_GBps"],
                                                        c["copy_GBps"])
            if "copy_GBps" in c else ""))
    open(os.path.join(A.out, "results.md"), "w").write("\n".join(lines) + "\n")


try:
    results["device"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip()
except OSError:
    results["device"] = "unknown (no nvidia-smi)"
say("device:", results["device"])
for name, fn in (("fixtures", phase_fixtures), ("lit", phase_lit), ("loops", phase_loops),
                 ("cases", phase_cases), ("chain", phase_chain)):
    if name in PHASES:
        fn()
        # Written after every phase, so that a run cut short keeps what it measured.
        json.dump(results, open(os.path.join(A.out, "results.json"), "w"), indent=1,
                  default=str)
        write_markdown()
sys.exit(1 if failures else 0)
