#!/usr/bin/env python3
"""Times one framework on one exported case of bench/compare/models.py.

  tf   TensorFlow graph mode: tf.function (autograph off)
  xla  TensorFlow with XLA: tf.function(jit_compile=True)
  jax  jax.jit, compiled ahead with .lower(...).compile()

Loads the case's inputs (in_<i>.npy, the same for every system), makes a first call (timed as
first_call_s), writes OUTDIR/out_<i>.npy (the outputs in the order of the manifest's
"outputs"), makes untimed calls until the warm-up, the first call included, has lasted
--warmup-s seconds (warmup_calls counts them), then times calls until it has at least --min-runs and either
--max-runs are done or --budget-s seconds were spent in timed calls. Every timed call waits
for its results. Writes OUTDIR/result.json.

Exit status: 0 on success, 1 on a failure (result.json then has "error"), 2 on bad arguments,
3 when the framework cannot be imported.

usage: bench/compare/worker.py --system tf|xla|jax --case-dir DIR/NAME --out OUTDIR
           [--min-runs 3] [--max-runs 10] [--budget-s 20] [--warmup-s 1]
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time
import traceback

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import numpy as np  # noqa: E402

    import models  # noqa: E402
except ImportError as e:
    print("worker: cannot import numpy: %s" % e, file=sys.stderr)
    sys.exit(3)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def import_framework(system):
    try:
        if system == "jax":
            import jax
            return "jax %s (jaxlib %s)" % (jax.__version__, _jaxlib_version())
        import tensorflow as tf
        return "tf %s" % tf.__version__
    except Exception as e:  # ImportError, or a broken installation
        print("worker: cannot import %s: %s" % ("jax" if system == "jax" else "tensorflow", e),
              file=sys.stderr)
        sys.exit(3)


def _jaxlib_version():
    try:
        import jaxlib
        return jaxlib.__version__
    except Exception:
        return "?"


def threads_note(system):
    cores = os.cpu_count()
    if system == "jax":
        flags = os.environ.get("XLA_FLAGS", "")
        return ("XLA CPU defaults (Eigen intra-op pool over all %d cores)%s" %
                (cores, "; XLA_FLAGS=" + flags if flags else ""))
    import tensorflow as tf
    intra = tf.config.threading.get_intra_op_parallelism_threads()
    inter = tf.config.threading.get_inter_op_parallelism_threads()
    onednn = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    return ("TF defaults: intra_op=%d, inter_op=%d (0 = one per core, %d cores)%s%s" % (
        intra, inter, cores,
        "; TF_ENABLE_ONEDNN_OPTS=" + onednn if onednn is not None else
        "; oneDNN at its default",
        "; XLA CPU (Eigen pool over all cores)" if system == "xla" else ""))


class Runner:
    """first() makes the warm-up call; call() one timed call; both return numpy outputs."""

    def __init__(self, system, manifest, arrays):
        self.system = system
        self.compile_s = None
        self.compile_note = ""
        if system == "jax":
            import jax
            fn = models.get_jax(manifest, arrays)
            self.args = [jax.device_put(a) for a in arrays]
            jax.block_until_ready(self.args)
            t0 = time.perf_counter()
            self.compiled = jax.jit(fn).lower(*self.args).compile()
            self.compile_s = time.perf_counter() - t0
            self.compile_note = ("jax.jit(f).lower(*args).compile(): tracing, lowering and "
                                 "XLA compilation; first_call_s adds the first run of the "
                                 "compiled object to it")
        else:
            import tensorflow as tf
            self.args = [tf.constant(a) for a in arrays]
            if system == "tf":
                self.fn = models.get_tf(manifest, arrays)
                t0 = time.perf_counter()
                self.fn.get_concrete_function()
                self.compile_s = time.perf_counter() - t0
                self.compile_note = ("tracing time of the tf.function (get_concrete_function); "
                                     "graph optimization (grappler) happens in the first call; "
                                     "first_call_s adds the first call to it")
            else:
                self.fn = models.get_xla(manifest, arrays)
                self.compile_note = "first call minus a steady call (median)"

    def _run(self):
        if self.system == "jax":
            import jax
            outs = self.compiled(*self.args)
            jax.block_until_ready(outs)
            return outs
        outs = self.fn(*self.args)
        return [o.numpy() for o in outs]

    def first(self):
        t0 = time.perf_counter()
        outs = self._run()
        dt = time.perf_counter() - t0
        if self.compile_s is not None:
            dt += self.compile_s  # jax and tf: compiled or traced before the first call
        return dt, [np.asarray(o) for o in outs]

    def call(self):
        t0 = time.perf_counter()
        self._run()
        return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", required=True, choices=["tf", "xla", "jax"])
    ap.add_argument("--case-dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--max-runs", type=int, default=10)
    ap.add_argument("--budget-s", type=float, default=20.0)
    ap.add_argument("--warmup-s", type=float, default=1.0)
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    result = {"system": args.system, "case": os.path.basename(os.path.normpath(args.case_dir)),
              "times_s": [], "median_s": None, "first_call_s": None, "compile_s": None,
              "compile_note": "", "peak_rss_mb": None, "version": None, "threads": None}

    def write_result():
        result["peak_rss_mb"] = round(peak_rss_mb(), 1)
        with open(os.path.join(args.out, "result.json"), "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")

    result["version"] = import_framework(args.system)
    try:
        manifest, case, arrays = models.load_case(args.case_dir)
        result["case"] = manifest["case"]
        result["threads"] = threads_note(args.system)
        runner = Runner(args.system, manifest, arrays)
        first, outs = runner.first()
        result["first_call_s"] = first
        if len(outs) != len(manifest["outputs"]):
            raise RuntimeError("%d outputs, the manifest declares %d" % (
                len(outs), len(manifest["outputs"])))
        for i, o in enumerate(outs):
            np.save(os.path.join(args.out, "out_%d.npy" % i), o)
        warmup = first - (runner.compile_s or 0.0)
        result["warmup_calls"] = 1
        while warmup < args.warmup_s:
            warmup += runner.call()
            result["warmup_calls"] += 1
        times = []
        spent = 0.0
        while len(times) < max(args.min_runs, 1) or (len(times) < args.max_runs and
                                             spent < args.budget_s):
            dt = runner.call()
            times.append(dt)
            spent += dt
        result["times_s"] = times
        result["median_s"] = statistics.median(times)
        if args.system == "xla":
            result["compile_s"] = first - result["median_s"]
        else:
            result["compile_s"] = runner.compile_s
        result["compile_note"] = runner.compile_note
    except Exception as e:
        traceback.print_exc()
        result["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0]
                                      if str(e).strip() else "")
        write_result()
        print("worker: %s on %s failed: %s" % (args.system, result["case"], result["error"]),
              file=sys.stderr)
        return 1
    write_result()
    print("%s %s: median %.6f s over %d runs, first call %.3f s" % (
        args.system, result["case"], result["median_s"], len(times), first))
    return 0


if __name__ == "__main__":
    sys.exit(main())
