#!/usr/bin/env python3
"""Times eddy AOT on exported cases with two `eddy compile --passes` pipelines (or two sets of
`eddy compile` flags), interleaved.

For each case directory (written by models.py --out), the GraphDef is imported and optimized as
run.py does (and differentiated for gradient cases), then compiled twice, once per pipeline,
into two AOT executables built as run.py builds them. The two run alternately, ROUNDS times
each, so that load from other processes on the machine falls on both alike; each process times
its calls as run.py's eddy-aot does and reports its median. The report gives, per pipeline, the
median of those medians, their range and the fastest call of all (the least disturbed by other
load), and checks that both pipelines' outputs agree with each other within the case's
tolerances.

  passes_ab.py --build build-bench --cases DIR --only rnn_fwd_100 [--a ''] [--b gemm-hoist]
  passes_ab.py ... --a gemm-hoist,dce --b gemm-hoist,dce --a-flags=--libm-math
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import (OPT_PASSES, build_aot_driver, function_args, parse_tensor_type,  # noqa: E402
                 run_cmd)


def prepare(args, case_dir, work):
    """IR of the case (differentiated for a gradient case), its entry and driver inputs."""
    manifest = json.load(open(os.path.join(case_dir, "manifest.json")))
    eddy = os.path.join(args.build, "tools", "eddy")
    io = []
    for f in manifest["feeds"]:
        io += ["--feed", f["name"]]
    for f in manifest["fetches"]:
        io += ["--fetch", f]
    tf_ir, ir = os.path.join(work, "model.tf.eddy"), os.path.join(work, "model.eddy")
    steps = [[eddy, "import", os.path.join(case_dir, manifest["graph"]), "--prune"] + io
             + ["-o", tf_ir],
             [eddy, "opt", tf_ir, "--passes=" + OPT_PASSES, "-o", ir]]
    entry = "main"
    if manifest["wrt"]:
        grad_ir = os.path.join(work, "model.grad.eddy")
        steps.append([eddy, "grad", ir, "--entry", "main", "--wrt", ",".join(manifest["wrt"]),
                      "-o", grad_ir])
        ir, entry = grad_ir, "main_grad"
    for cmd in steps:
        _, err = run_cmd(cmd)
        if err:
            raise RuntimeError(err)
    inputs = [os.path.join(case_dir, f["file"]) for f in manifest["feeds"]]
    if manifest["wrt"]:
        for i, t in enumerate(function_args(ir, entry)[len(inputs):]):
            dims, dtype = parse_tensor_type(t)
            path = os.path.join(work, "seed_%d.npy" % i)
            np.save(path, np.ones(dims, dtype))
            inputs.append(path)
    return manifest, ir, entry, inputs


def build_aot(args, ir, entry, passes, flags, work):
    """The AOT executable of ir compiled with `--passes=passes` and the flags (a list), in
    work."""
    os.makedirs(work, exist_ok=True)
    eddy = os.path.join(args.build, "tools", "eddy")
    obj, hdr = os.path.join(work, "bench_model.o"), os.path.join(work, "bench_model.h")
    _, err = run_cmd([eddy, "compile", ir, "--entry", entry, "--prefix", "bench_model",
                      "--passes=" + passes, "-o", obj, "--header", hdr] + flags)
    if err:
        raise RuntimeError(err)
    exe = os.path.join(work, "aot")
    err = build_aot_driver(args.build, work, obj, exe)
    if err:
        raise RuntimeError(err)
    return exe


def run_once(args, exe, inputs, out):
    """(median, fastest call) of one process; with --cpu-time, its CPU time (user + system)
    per call instead, warm-up and loading included, for both."""
    os.makedirs(out, exist_ok=True)
    cmd = [exe, "--mode=aot", "--min-runs", str(args.min_runs), "--max-runs",
           str(args.max_runs), "--budget-s", str(args.budget_s), "--out", out]
    for p in inputs:
        cmd += ["--input", p]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = json.load(open(os.path.join(out, "result.json")))
    if args.cpu_time:
        cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) \
            / (len(r["times_s"]) + 1)
        return cpu, cpu
    return r["median_s"], min(r["times_s"])


def agree(manifest, a_dir, b_dir):
    worst = 0.0
    for i, o in enumerate(manifest["outputs"]):
        a = np.load(os.path.join(a_dir, "out_%d.npy" % i)).astype(np.float64)
        b = np.load(os.path.join(b_dir, "out_%d.npy" % i)).astype(np.float64)
        if a.shape != b.shape or not np.allclose(b, a, rtol=o["rtol"], atol=o["atol"]):
            return False, None
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
    return True, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="an eddy build (Release) with tools/eddy")
    ap.add_argument("--cases", required=True, help="models.py --out DIR")
    ap.add_argument("--only", action="append", required=True, help="case name (repeatable)")
    ap.add_argument("--a", default="", help="pipeline A (default: none)")
    ap.add_argument("--b", default="gemm-hoist", help="pipeline B")
    ap.add_argument("--a-flags", default="", help="more `eddy compile` flags for A "
                    "(space-separated, e.g. --libm-math)")
    ap.add_argument("--b-flags", default="", help="more `eddy compile` flags for B")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--min-runs", type=int, default=5)
    ap.add_argument("--max-runs", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=5.0)
    ap.add_argument("--cpu-time", action="store_true",
                    help="time by CPU time per call (load from other processes inflates it less "
                    "than wall time; meaningful with OPENBLAS_NUM_THREADS=1)")
    args = ap.parse_args()
    for case in args.only:
        with tempfile.TemporaryDirectory(prefix="eddy-ab-") as work:
            manifest, ir, entry, inputs = prepare(args, os.path.join(args.cases, case), work)
            exes = {k: build_aot(args, ir, entry, p, f.split(), os.path.join(work, k))
                    for k, p, f in (("a", args.a, args.a_flags), ("b", args.b, args.b_flags))}
            times = {"a": [], "b": []}
            fastest = {"a": [], "b": []}
            for r in range(args.rounds):
                for k in ("a", "b") if r % 2 == 0 else ("b", "a"):
                    med, best = run_once(args, exes[k], inputs, os.path.join(work, "out_%s" % k))
                    times[k].append(med)
                    fastest[k].append(best)
            ok, worst = agree(manifest, os.path.join(work, "out_a"), os.path.join(work, "out_b"))
            ma, mb = statistics.median(times["a"]), statistics.median(times["b"])
            fa, fb = min(fastest["a"]), min(fastest["b"])
            print("%s: A [%s] median %.2f ms (range of medians %.2f-%.2f, fastest call %.2f), "
                  "B [%s] median %.2f ms (%.2f-%.2f, fastest %.2f); B/A: medians %.2f, fastest "
                  "%.2f; outputs %s" % (
                      case, " ".join([args.a or "none"] + args.a_flags.split()), ma * 1e3, min(times["a"]) * 1e3,
                      max(times["a"]) * 1e3, fa * 1e3,
                      " ".join([args.b or "none"] + args.b_flags.split()), mb * 1e3,
                      min(times["b"]) * 1e3, max(times["b"]) * 1e3, fb * 1e3, mb / ma, fb / fa,
                      "agree (max |diff| %.3g)" % worst if ok else "DISAGREE"), flush=True)


if __name__ == "__main__":
    main()
