"""Memory and time of loop gradients under each --loop-memory policy.

--model lstm (default): the LSTM of lstm.eddy (hidden 256, batch 32, a
run-time sequence length T), differentiated w.r.t. its weights with
`eddy grad --loop-memory=POLICY`, compiled with `eddy compile`, linked with
bench/compare's AOT driver and run at each T. --model revnet: the RevNet of
examples/revnet (batch 128, width 2x64, a run-time depth T), differentiated
w.r.t. everything, store against checkpoint:4 and reversible. For every (T, policy): the median call time, the runtime
context's peak tensor bytes, the process's peak resident set, and the largest
difference of the gradients from the stored policy's. The accumulator memory
is the peak tensor bytes minus what every policy holds (inputs, weights,
results: the peak of the forward function alone).

    python3 bench/loop_memory/run.py [--model lstm|revnet|revnet_shared] [--build DIR]
                                     [--steps 100,1000,10000] [--out FILE.md]
                                     [--work DIR]

Needs numpy and a Release build of eddy (bench/compare/run.sh makes both:
build-bench/ and its virtual environment). The table goes to --out
(default bench/loop_memory/results[_MODEL].md for revnet and revnet_shared) and to
standard output.
"""
import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "compare"))
from run import build_aot_driver, machine_info  # noqa: E402

HIDDEN, BATCH = 256, 32


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def revnet_inputs(steps):
    """x1, x2 [128, 64], wf [T, 64, 64], bf [T, 64], wg, bg, two seeds."""
    rng = np.random.default_rng(7)
    half = (128, 64)
    return [rng.standard_normal(half).astype(np.float32),
            rng.standard_normal(half).astype(np.float32),
            rng.uniform(-1 / 64, 1 / 64, (steps, 64, 64)).astype(np.float32),
            rng.uniform(-0.1, 0.1, (steps, 64)).astype(np.float32),
            rng.uniform(-1 / 64, 1 / 64, (steps, 64, 64)).astype(np.float32),
            rng.uniform(-0.1, 0.1, (steps, 64)).astype(np.float32),
            np.ones(half, np.float32), np.ones(half, np.float32)]


MODELS = {
    "lstm": {"file": os.path.join(HERE, "lstm.eddy"), "entry": "main", "wrt": "3,4,5",
             "grads": range(2, 5), "steps": "100,1000,10000",
             "what": "The LSTM of lstm.eddy (hidden 256, batch 32) differentiated w.r.t. "
                     "wx, wh and b, compiled AOT, T steps."},
    "revnet": {"file": os.path.join(ROOT, "examples", "revnet", "model.eddy"),
               "entry": "revnet", "wrt": "0,1,2,3,4,5", "grads": range(2, 8),
               "steps": "8,32,128,256",
               "what": "The RevNet of examples/revnet (batch 128, width 2x64, weights "
                       "uniform in +-1/64) differentiated w.r.t. everything, compiled AOT, "
                       "depth T."},
    "revnet_shared": {"file": os.path.join(HERE, "revnet_shared.eddy"), "entry": "revnet",
                      "wrt": "0,1,2,3,4,5", "grads": range(2, 8),
                      "steps": "8,32,128,256,1024",
                      "what": "The RevNet of examples/revnet with one set of weights shared by "
                              "every block (revnet_shared.eddy; batch 128, width 2x64, weights "
                              "uniform in +-1/1024, biases in +-0.01), differentiated w.r.t. "
                              "everything, compiled AOT, depth T (an argument): the weights' "
                              "gradients do not grow with T, so the working memory is the "
                              "activations'."},
}


def revnet_shared_inputs(steps):
    """x1, x2 [128, 64], wf [64, 64], bf [64], wg, bg, the depth, two seeds.

    The same weights in every block make the activations grow geometrically
    with the depth, by about the weights' norm per block, and the inverse's
    rounding with them: weights of +-1/1024 keep that growth within f32 to
    depth 1024."""
    rng = np.random.default_rng(7)
    half = (128, 64)
    return [rng.standard_normal(half).astype(np.float32),
            rng.standard_normal(half).astype(np.float32),
            rng.uniform(-1 / 1024, 1 / 1024, (64, 64)).astype(np.float32),
            rng.uniform(-0.01, 0.01, (64,)).astype(np.float32),
            rng.uniform(-1 / 1024, 1 / 1024, (64, 64)).astype(np.float32),
            rng.uniform(-0.01, 0.01, (64,)).astype(np.float32),
            np.array(steps, np.int64),
            np.ones(half, np.float32), np.ones(half, np.float32)]


def inputs(work, steps, model="lstm"):
    """x [T, 32, 256], h0, c0, wx, wh, b and two seeds of ones; fixed seeds."""
    rng = np.random.default_rng(7)
    arrays = revnet_inputs(steps) if model == "revnet" else revnet_shared_inputs(
        steps) if model == "revnet_shared" else [
        rng.standard_normal((steps, BATCH, HIDDEN)).astype(np.float32) * 0.5,
        np.zeros((BATCH, HIDDEN), np.float32),
        np.zeros((BATCH, HIDDEN), np.float32),
        rng.standard_normal((HIDDEN, 4 * HIDDEN)).astype(np.float32) * 0.05,
        rng.standard_normal((HIDDEN, 4 * HIDDEN)).astype(np.float32) * 0.05,
        np.zeros((4 * HIDDEN,), np.float32),
        np.ones((BATCH, HIDDEN), np.float32),
        np.ones((BATCH, HIDDEN), np.float32),
    ]
    paths = []
    for i, a in enumerate(arrays):
        path = os.path.join(work, "in_%s_%d_%d.npy" % (model, steps, i))
        np.save(path, a)
        paths.append(path)
    return paths


def build(args, policy, work):
    """The AOT executable of the gradient under policy."""
    m = MODELS[args.model]
    eddy = os.path.join(args.build, "tools", "eddy")
    d = os.path.join(work, args.model + "_" + policy.replace(":", "_"))
    os.makedirs(d, exist_ok=True)
    grad = os.path.join(d, "grad.eddy")
    stats = run([eddy, "grad", m["file"], "--entry", m["entry"], "--wrt", m["wrt"],
                 "--loop-memory=" + policy, "--stats", "-o", grad])
    obj = os.path.join(d, "bench_model.o")
    run([eddy, "compile", grad, "--entry", m["entry"] + "_grad", "--prefix", "bench_model",
         "-o", obj, "--header", os.path.join(d, "bench_model.h")])
    exe = os.path.join(d, "aot")
    err = build_aot_driver(args.build, d, obj, exe)
    if err:
        sys.exit("linking %s: %s" % (exe, err))
    return exe, stats


def held_mb(ins, out):
    """Megabytes of the inputs and results: held by every policy."""
    paths = list(ins) + [os.path.join(out, f) for f in os.listdir(out)
                         if f.startswith("out_") and f.endswith(".npy")]
    return sum(np.load(p, mmap_mode="r").nbytes for p in paths) / 2 ** 20


def call(exe, ins, out, runs):
    os.makedirs(out, exist_ok=True)
    cmd = [exe, "--mode=aot", "--out", out, "--min-runs", str(runs),
           "--max-runs", str(runs), "--budget-s", "1"]
    for p in ins:
        cmd += ["--input", p]
    run(cmd)
    with open(os.path.join(out, "result.json")) as f:
        return json.load(f)


def policies(steps, model="lstm"):
    if model.startswith("revnet"):
        return ["store", "checkpoint:4", "reversible"]
    return ["store", "checkpoint",
            "checkpoint:%d" % math.ceil(math.sqrt(steps)),
            "checkpoint:%d" % max(1, math.ceil(math.log2(steps)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=sorted(MODELS), default="lstm")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--steps", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--work", default=os.path.join(
        os.path.expanduser("~"), ".cache", "eddy-bench", "loop_memory"))
    args = ap.parse_args()
    model = MODELS[args.model]
    if args.out is None:
        args.out = os.path.join(HERE, "results.md" if args.model == "lstm"
                                else "results_%s.md" % args.model)
    os.makedirs(args.work, exist_ok=True)
    steps_list = [int(s) for s in (args.steps or model["steps"]).split(",")]
    exes = {}
    rows = []
    for steps in steps_list:
        ins = inputs(args.work, steps, args.model)
        runs = 3 if steps <= 1000 else 1
        ref = None
        store = None
        for policy in policies(steps, args.model):
            if policy not in exes:
                exes[policy] = build(args, policy, args.work)[0]
            out = os.path.join(args.work, "out_%s_%s_%d" % (
                args.model, policy.replace(":", "_"), steps))
            r = call(exes[policy], ins, out, runs)
            grads = [np.load(os.path.join(out, "out_%d.npy" % i)) for i in model["grads"]]
            if ref is None:
                ref, store = grads, r
            diff = max(float(np.max(np.abs(g - h)) / max(1e-30, float(np.max(np.abs(h)))))
                       for g, h in zip(grads, ref))
            held = held_mb(ins, out)
            acc = r["peak_tensor_mb"] - held
            store_acc = store["peak_tensor_mb"] - held
            rows.append({"steps": steps, "policy": policy, "time_s": r["median_s"],
                         "time_ratio": r["median_s"] / store["median_s"],
                         "peak_tensor_mb": r["peak_tensor_mb"], "acc_mb": acc,
                         "acc_ratio": acc / store_acc if store_acc > 0 else float("nan"),
                         "peak_rss_mb": r["peak_rss_mb"], "rel_diff": diff})
            print("T=%-6d %-16s %8.3f s  x%.2f  peak tensors %8.1f MB  working %8.1f MB"
                  " (%.2f%% of store)  rss %8.1f MB  diff %.2g" % (
                      steps, policy, r["median_s"], rows[-1]["time_ratio"],
                      r["peak_tensor_mb"], acc, 100 * rows[-1]["acc_ratio"],
                      r["peak_rss_mb"], diff), flush=True)
    lines = ["# Loop gradient memory: %s" % args.model, "",
             "`python3 bench/loop_memory/run.py --model %s` on %s, %s. %s "
             "Working memory: peak tensor bytes minus the inputs and results. Difference: largest |g - g_store| / max |g_store| over "
             "the gradients." % (args.model, machine_info(), datetime.date.today().isoformat(),
                                 model["what"]),
             "",
             "| T | policy | time | vs store | peak tensors | working memory | of store's | "
             "peak RSS | difference |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %s | %.3f s | %.2fx | %.1f MB | %.1f MB | %.1f%% | %.0f MB | %.1e |" % (
            r["steps"], r["policy"], r["time_s"], r["time_ratio"], r["peak_tensor_mb"],
            r["acc_mb"], 100 * r["acc_ratio"], r["peak_rss_mb"], r["rel_diff"]))
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
