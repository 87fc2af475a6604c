#!/usr/bin/env python3
"""The models of the TensorFlow / JAX / eddy comparison, each defined once in TensorFlow and
once in JAX, and the exporter of their frozen graphs and inputs.

For every case it writes DIR/NAME/:

  model.pb       the frozen tf.function of the FORWARD model (v2 control flow: functional
                 While, TensorList; lower_control_flow=False; deterministic serialization,
                 function library sorted by name)
  in_<i>.npy     the inputs, one per feed, in feed order
  manifest.json  feeds, fetches, the inputs a gradient case differentiates (wrt), the
                 outputs with their tolerances, the versions

Gradient cases export the forward graph only; their TensorFlow and JAX callables return the
forward outputs, then d(sum over outputs of reduce_sum(output))/d(each wrt input), in wrt order.

worker.py builds its callables with get_tf / get_xla / get_jax below.

usage: bench/compare/models.py --out DIR [--only NAME]... [--small] [--list]
"""

import argparse
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

# TensorFlow and JAX are imported when first needed, so that a worker timing one framework
# does not load the other.
_tf = None
_jax = None


def tf_mod():
    global _tf
    if _tf is None:
        import tensorflow
        _tf = tensorflow
    return _tf


def jax_mod():
    global _jax
    if _jax is None:
        import jax
        _jax = jax
    return _jax


# ---- Inputs -----------------------------------------------------------------------------


def randn(seed, shape, scale=1.0):
    return (np.random.RandomState(seed).standard_normal(shape) * scale).astype(np.float32)


def uniform(seed, shape, lo, hi):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(np.float32)


def sizes(small):
    """Every size the cases use; --small shrinks all of them."""
    if small:
        return dict(n=1000, vec=8, batch=2, hidden=8, fp=16, nb=2, nd=8, outer=5,
                    inner=3, items=10, mat=16)
    return dict(n=1000000, vec=256, batch=32, hidden=256, fp=512, nb=32, nd=128,
                outer=100, inner=10, items=1000, mat=64)


# ---- Loops ------------------------------------------------------------------------------


def loop_inputs(s, vector):
    if vector:
        v = s["vec"]
        return [("x", np.zeros([v], np.float32)), ("a", uniform(21, [v], 0.99, 0.9999)),
                ("b", uniform(22, [v], 0.0, 0.001)), ("n", np.array(s["n"], np.int32))]
    return [("x", np.array(0.0, np.float32)), ("a", np.array(0.9999, np.float32)),
            ("b", np.array(0.0002, np.float32)), ("n", np.array(s["n"], np.int32))]


def loop_tf(params):
    tf = tf_mod()

    def fn(x, a, b, n):
        def body(i, v):
            return i + 1, v * a + b

        _, x = tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), x])
        return [x]

    return fn


def loop_jax(params):
    lax = jax_mod().lax

    def fn(x, a, b, n):
        return [lax.fori_loop(0, n, lambda i, v: v * a + b, x)]

    return fn


# ---- Elman RNN and LSTM -----------------------------------------------------------------


def rnn_inputs(s, steps):
    bt, hd = s["batch"], s["hidden"]
    sc = 0.5 / np.sqrt(hd)
    return [("x", randn(31, [steps, bt, hd])), ("h0", randn(32, [bt, hd], 0.5)),
            ("w", randn(33, [hd, hd], sc)), ("u", randn(34, [hd, hd], sc)),
            ("b", randn(35, [hd], 0.1))]


def rnn_tf(params):
    tf = tf_mod()

    def fn(x, h0, w, u, b):
        steps = int(x.shape[0])

        def body(t, h):
            return t + 1, tf.tanh(tf.matmul(x[t], w) + tf.matmul(h, u) + b)

        _, h = tf.while_loop(lambda t, h: t < steps, body, [tf.constant(0), h0],
                             maximum_iterations=steps)
        return [h]

    return fn


def rnn_jax(params):
    jax = jax_mod()
    jnp = jax.numpy

    def fn(x, h0, w, u, b):
        def step(h, xt):
            return jnp.tanh(xt @ w + h @ u + b), None

        h, _ = jax.lax.scan(step, h0, x)
        return [h]

    return fn


def lstm_inputs(s, steps):
    bt, hd = s["batch"], s["hidden"]
    sc = 0.5 / np.sqrt(hd)
    return [("x", randn(41, [steps, bt, hd])), ("h0", randn(42, [bt, hd], 0.5)),
            ("c0", randn(43, [bt, hd], 0.5)), ("wx", randn(44, [hd, 4 * hd], sc)),
            ("wh", randn(45, [hd, 4 * hd], sc)), ("b", randn(46, [4 * hd], 0.1))]


def lstm_tf(params):
    tf = tf_mod()

    def fn(x, h0, c0, wx, wh, b):
        steps = int(x.shape[0])

        def body(t, h, c):
            z = tf.matmul(x[t], wx) + tf.matmul(h, wh) + b
            i, f, g, o = tf.split(z, 4, axis=1)
            c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            h = tf.sigmoid(o) * tf.tanh(c)
            return t + 1, h, c

        _, h, c = tf.while_loop(lambda t, h, c: t < steps, body, [tf.constant(0), h0, c0],
                                maximum_iterations=steps)
        return [h, c]

    return fn


def lstm_jax(params):
    jax = jax_mod()
    jnp = jax.numpy
    sig = jax.nn.sigmoid

    def fn(x, h0, c0, wx, wh, b):
        def step(hc, xt):
            h, c = hc
            z = xt @ wx + h @ wh + b
            i, f, g, o = jnp.split(z, 4, axis=1)
            c = sig(f) * c + sig(i) * jnp.tanh(g)
            h = sig(o) * jnp.tanh(c)
            return (h, c), None

        (h, c), _ = jax.lax.scan(step, (h0, c0), x)
        return [h, c]

    return fn


# ---- Fixed point ------------------------------------------------------------------------

FP_TOL = 1e-5
FP_MAX_ITERS = 10000


def fp_inputs(s):
    m = s["fp"]
    # w's spectral radius is about 1; the iteration still converges (tanh' < 1 at the fixed
    # point), slowly: 134 iterations at m = 512, 59 at m = 16.
    return [("x", np.zeros([m, 1], np.float32)), ("w", randn(51, [m, m], 1.0 / np.sqrt(m))),
            ("b", randn(52, [m, 1], 0.1))]


def fp_tf(params):
    tf = tf_mod()

    def fn(x, w, b):
        def cond(k, x, d):
            return tf.logical_and(d >= FP_TOL, k < FP_MAX_ITERS)

        def body(k, x, d):
            xn = tf.tanh(tf.matmul(w, x) + b)
            return k + 1, xn, tf.reduce_max(tf.abs(xn - x))

        k, x, _ = tf.while_loop(cond, body, [tf.constant(0), x, tf.constant(np.inf, tf.float32)])
        return [x, k]

    return fn


def fp_jax(params):
    jax = jax_mod()
    jnp = jax.numpy

    def fn(x, w, b):
        def cond(s):
            k, _, d = s
            return jnp.logical_and(d >= FP_TOL, k < FP_MAX_ITERS)

        def body(s):
            k, x, _ = s
            xn = jnp.tanh(w @ x + b)
            return k + 1, xn, jnp.max(jnp.abs(xn - x))

        k, x, _ = jax.lax.while_loop(cond, body, (jnp.int32(0), x, jnp.float32(np.inf)))
        return [x, k]

    return fn


# ---- Nested loops -----------------------------------------------------------------------


def nested_inputs(s):
    nb, nd = s["nb"], s["nd"]
    return [("x", randn(61, [nb, nd])), ("w", randn(62, [nd, nd], 1.0 / np.sqrt(nd)))]


def nested_tf(params):
    tf = tf_mod()
    outer, inner = params["outer"], params["inner"]

    def fn(x, w):
        def obody(i, x):
            def ibody(j, y):
                return j + 1, tf.tanh(tf.matmul(y, w))

            _, y = tf.while_loop(lambda j, y: j < inner, ibody, [tf.constant(0), x])
            return i + 1, 0.5 * x + 0.5 * y

        _, x = tf.while_loop(lambda i, x: i < outer, obody, [tf.constant(0), x])
        return [x]

    return fn


def nested_jax(params):
    jax = jax_mod()
    jnp = jax.numpy
    lax = jax.lax
    outer, inner = params["outer"], params["inner"]

    def fn(x, w):
        def obody(i, x):
            y = lax.fori_loop(0, inner, lambda j, y: jnp.tanh(y @ w), x)
            return 0.5 * x + 0.5 * y

        return [lax.fori_loop(0, outer, obody, x)]

    return fn


# ---- map_fn -----------------------------------------------------------------------------


def map_inputs(s):
    k, m = s["items"], s["mat"]
    return [("a", randn(71, [k, m, m])), ("b", randn(72, [k, m, m]))]


def map_tf(params):
    tf = tf_mod()

    def fn(a, b):
        return [tf.map_fn(lambda p: tf.matmul(p[0], p[1]), (a, b),
                          fn_output_signature=tf.float32)]

    return fn


def map_jax(params):
    jax = jax_mod()

    def fn(a, b):
        return [jax.lax.map(lambda p: p[0] @ p[1], (a, b))]

    return fn


# ---- The cases --------------------------------------------------------------------------
# Tolerances (rtol, atol) of each output when two systems' results are compared. Chosen from
# the differences measured between TF graph, TF XLA and JAX on these inputs, with a margin
# of about 10x.
#
# Measured (full sizes, max over TF graph / XLA / JAX pairs; XLA and JAX agree exactly on
# every forward output here): loop x 1.7e-4 relative; RNN/LSTM final h, c below 1e-6
# absolute; fixed_point x 4.4e-7 absolute, k equal; map_fn equal; gradients over 100-1000
# steps at most 1.5e-5 absolute (values up to 60; the relative difference of the small
# elements reaches 6e-2, hence the atol).
#
# The loops: x*a + b in f32 with a close to 1 stops moving anywhere within about
# ulp(x) / (1 - a) of b / (1 - a), 1e-3 relative for a = 0.9999; where it stops depends on
# rounding (fused multiply-add or not), so the loops get that much.
LOOP_RTOL = 2e-3
GRAD_TOL = (1e-3, 1e-4)


class Case:
    def __init__(self, name, family, description, jax_note, inputs, tf_fn, jax_fn,
                 outputs, wrt=(), grad_tol=None, params=None):
        self.name = name
        self.family = family
        self.description = description
        self.jax_note = jax_note
        self.inputs = inputs        # sizes() dict -> [(feed name, array)], in feed order
        self.tf_fn = tf_fn          # params -> forward function of tensors, returns a list
        self.jax_fn = jax_fn        # params -> forward function of arrays, returns a list
        self.outputs = outputs      # [(name, rtol, atol)] of the forward outputs
        self.wrt = list(wrt)
        self.grad_tol = grad_tol
        self.params = params or (lambda small: {})  # small -> manifest "params"


def add_recurrent(add, family, grad, steps):
    kind = "grad" if grad else "fwd"
    note = "lax.scan%s" % (" differentiated with jax.value_and_grad (while_loop has no "
                            "reverse mode)" if grad else "")

    def inputs(s):
        return (rnn_inputs if family == "rnn" else lstm_inputs)(s, 4 if s["small"] else steps)

    if family == "rnn":
        add("rnn_%s_%d" % (kind, steps), "rnn",
            "Elman RNN h = tanh(x[t] @ w + h @ u + b), hidden 256, batch 32, %d steps; "
            "output final h%s" % (steps, "; gradients w.r.t. w, u, b" if grad else ""),
            note, inputs, rnn_tf, rnn_jax, [("h", 1e-4, 1e-5)],
            wrt=["w", "u", "b"] if grad else [], grad_tol=GRAD_TOL)
    else:
        add("lstm_%s_%d" % (kind, steps), "lstm",
            "LSTM (gates i, f, g, o), hidden 256, batch 32, %d steps; outputs final h "
            "and c%s" % (steps, "; gradients w.r.t. wx, wh, b" if grad else ""),
            note, inputs, lstm_tf, lstm_jax, [("h", 1e-4, 1e-5), ("c", 1e-4, 1e-5)],
            wrt=["wx", "wh", "b"] if grad else [], grad_tol=GRAD_TOL)


def make_cases():
    cases = []

    def add(*a, **k):
        cases.append(Case(*a, **k))

    add("loop_scalar", "loop",
        "scalar while loop: n times x = x*a + b (x -> b/(1-a)); n is an input; x compared "
        "with rtol 2e-3 (f32 rounding near the fixed point)",
        "lax.fori_loop with a traced trip count (a lax.while_loop)",
        lambda s: loop_inputs(s, False), loop_tf, loop_jax, [("x", LOOP_RTOL, 1e-5)])
    add("loop_vector", "loop",
        "vector while loop: n times x = x*a + b elementwise on f32[256]; n is an input; x "
        "compared with rtol 2e-3 (f32 rounding near the fixed point)",
        "lax.fori_loop with a traced trip count (a lax.while_loop)",
        lambda s: loop_inputs(s, True), loop_tf, loop_jax, [("x", LOOP_RTOL, 1e-5)])
    for family in ("rnn", "lstm"):
        for grad in (False, True):
            for steps in (100, 1000):
                add_recurrent(add, family, grad, steps)
    add("fixed_point", "fixed_point",
        "fixed-point iteration x = tanh(w @ x + b), w 512x512 (randn/sqrt(512)), until "
        "max|x_new - x| < 1e-5 or 10000 iterations (134); outputs x and the iteration count k "
        "(k compared with atol 2: systems may stop an iteration apart)",
        "lax.while_loop", fp_inputs, fp_tf, fp_jax, [("x", 1e-4, 1e-4), ("k", 0.0, 2)])
    add("nested", "nested",
        "nested loops: 100 x { y = x; 10 x y = tanh(y @ w); x = 0.5*x + 0.5*y }, "
        "x f32[32,128], w f32[128,128]; constant trip counts",
        "nested lax.fori_loop (constant trip counts, so JAX emits them as scans)",
        nested_inputs, nested_tf, nested_jax,
        [("x", 1e-4, 1e-5)],
        params=lambda small: {k: sizes(small)[k] for k in ("outer", "inner")})
    add("map_fn", "map_fn",
        "tf.map_fn of a 64x64 matmul over 1000 pairs of matrices",
        "lax.map (sequential: a scan over the items, as map_fn's While is)",
        map_inputs, map_tf, map_jax, [("y", 1e-4, 1e-4)])
    return {c.name: c for c in cases}


CASES = make_cases()


def case_inputs(case, small):
    s = sizes(small)
    s["small"] = small
    return case.inputs(s)


# ---- Callables for worker.py ------------------------------------------------------------


def load_case(case_dir):
    """(manifest, Case, [input arrays in feed order]) of an exported case directory."""
    with open(os.path.join(case_dir, "manifest.json")) as f:
        manifest = json.load(f)
    case = CASES[manifest["case"]]
    arrays = [np.load(os.path.join(case_dir, fd["file"])) for fd in manifest["feeds"]]
    return manifest, case, arrays


def _feed_names(case):
    return [n for n, _ in case_inputs(case, True)]


def tf_function(case, params, arrays, jit_compile, with_grads=True):
    """A tf.function of the case (forward outputs, then gradients for a gradient case) with
    an input signature matching `arrays`."""
    tf = tf_mod()
    fwd = case.tf_fn(params)
    names = _feed_names(case)
    idx = [names.index(w) for w in case.wrt] if with_grads else []

    if idx:
        def fn(*args):
            with tf.GradientTape() as tape:
                for i in idx:
                    tape.watch(args[i])
                outs = fwd(*args)
                loss = tf.add_n([tf.reduce_sum(o) for o in outs])
            grads = tape.gradient(loss, [args[i] for i in idx])
            return list(outs) + list(grads)
    else:
        def fn(*args):
            return list(fwd(*args))

    specs = [tf.TensorSpec(a.shape, tf.as_dtype(a.dtype), name=n)
             for n, a in zip(names, arrays)]
    return tf.function(fn, input_signature=specs, autograph=False, jit_compile=jit_compile)


def get_tf(manifest, arrays):
    """TensorFlow graph mode: tf.function (autograph off; the models use tf.while_loop)."""
    case = CASES[manifest["case"]]
    return tf_function(case, manifest.get("params", {}), arrays, jit_compile=False)


def get_xla(manifest, arrays):
    """TensorFlow with XLA: tf.function(jit_compile=True)."""
    case = CASES[manifest["case"]]
    return tf_function(case, manifest.get("params", {}), arrays, jit_compile=True)


def get_jax(manifest, arrays):
    """The case as a JAX function of arrays returning a tuple (not jitted: the worker jits and
    compiles it, timing that)."""
    jax = jax_mod()
    jnp = jax.numpy
    case = CASES[manifest["case"]]
    fwd = case.jax_fn(manifest.get("params", {}))
    names = _feed_names(case)
    idx = [names.index(w) for w in case.wrt]
    if not idx:
        return lambda *args: tuple(fwd(*args))

    def fn(*args):
        def loss(*ws):
            a = list(args)
            for i, w in zip(idx, ws):
                a[i] = w
            outs = fwd(*a)
            return sum(jnp.sum(o) for o in outs), outs

        (_, outs), grads = jax.value_and_grad(loss, argnums=tuple(range(len(idx))),
                                              has_aux=True)(*[args[i] for i in idx])
        return tuple(outs) + tuple(grads)

    return fn


# ---- Export -----------------------------------------------------------------------------


def export_case(case, out_dir, small):
    tf = tf_mod()
    jax = jax_mod()
    from tensorflow.python.framework import convert_to_constants

    inputs = case_inputs(case, small)
    params = case.params(small)
    arrays = [v for _, v in inputs]
    fn = tf_function(case, params, arrays, jit_compile=False, with_grads=False)
    concrete = fn.get_concrete_function()
    frozen = convert_to_constants.convert_variables_to_constants_v2(
        concrete, lower_control_flow=False)
    gd = frozen.graph.as_graph_def(add_shapes=True)
    functions = sorted(gd.library.function, key=lambda f: f.signature.name)
    del gd.library.function[:]
    gd.library.function.extend(functions)
    feeds = [t.name.split(":")[0] for t in frozen.inputs]
    fetches = [t.name for t in frozen.outputs]
    # The freezing emits the Placeholders in an order that changes from run to run; placed
    # first in feed order (the rest keep theirs), a re-export is byte-identical and an
    # importer that numbers arguments by node order numbers them as the feeds.
    rank = {name: i for i, name in enumerate(feeds)}
    nodes = sorted(gd.node, key=lambda n: rank.get(n.name, len(feeds)))
    del gd.node[:]
    gd.node.extend(nodes)
    if len(fetches) != len(case.outputs):
        raise RuntimeError("%s: %d fetches, %d outputs declared" % (
            case.name, len(fetches), len(case.outputs)))

    d = os.path.join(out_dir, case.name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    with open(os.path.join(d, "model.pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    outputs = [{"name": n, "rtol": r, "atol": a} for n, r, a in case.outputs]
    for w in case.wrt:
        outputs.append({"name": "d_" + w, "rtol": case.grad_tol[0], "atol": case.grad_tol[1]})
    manifest = {
        "case": case.name,
        "family": case.family,
        "description": case.description,
        "jax_note": case.jax_note,
        "graph": "model.pb",
        "tensorflow": tf.__version__,
        "jax": jax.__version__,
        "small": small,
        "params": params,
        "feeds": [],
        "fetches": fetches,
        "wrt": [feeds[[n for n, _ in inputs].index(w)] for w in case.wrt],
        "outputs": outputs,
    }
    for i, (name, value) in enumerate(zip(feeds, arrays)):
        fname = "in_%d.npy" % i
        np.save(os.path.join(d, fname), value)
        manifest["feeds"].append({"name": name, "file": fname, "dtype": str(value.dtype),
                                  "shape": list(value.shape)})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return gd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="output directory (one subdirectory per case)")
    ap.add_argument("--only", action="append", default=[], help="export only this case; "
                    "repeatable")
    ap.add_argument("--small", action="store_true", help="small sizes, for smoke tests")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args()
    if args.list:
        for name in CASES:
            print(name)
        return 0
    if not args.out:
        ap.error("--out is required")
    unknown = [n for n in args.only if n not in CASES]
    if unknown:
        ap.error("unknown case(s): %s (--list prints them)" % ", ".join(unknown))
    os.makedirs(args.out, exist_ok=True)
    for name, case in CASES.items():
        if args.only and name not in args.only:
            continue
        gd = export_case(case, args.out, args.small)
        print("%-16s %8d bytes, %3d nodes, %2d functions" % (
            name, gd.ByteSize(), len(gd.node), len(gd.library.function)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
