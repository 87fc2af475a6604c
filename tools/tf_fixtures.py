#!/usr/bin/env python3
"""Writes the TensorFlow fixtures of tests/fixtures/tf/ (and the malformed inputs of
tests/fixtures/tf-bad/).

For every model and both control-flow representations it writes, into
tests/fixtures/tf/<model>_<v1|v2>/:

  model.pb       the binary GraphDef (with its FunctionDefLibrary for v2)
  in_<i>.npy     the inputs, one per feed
  out_<i>.npy    TensorFlow's own outputs, one per fetch
  manifest.json  feeds, fetches, tolerances, the TensorFlow version

v2 graphs come from a frozen tf.function (functional While/If, TensorList ops in gradients);
v1 graphs from a tf.compat.v1 graph built with control flow v2 disabled (Switch, Merge, Enter,
Exit, NextIteration, LoopCond; TensorArrays in map_fn/scan/foldl; stacks in gradients).

Needs `pip install tensorflow-cpu numpy`; neither the build nor the tests need it.

usage: tools/tf_fixtures.py [--out DIR] [--bad-out DIR] [--only NAME]...
"""

import argparse
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import convert_to_constants  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Tolerances (relative, absolute) for comparing eddy's results with TensorFlow's. f32 results
# match within 1e-5 relative unless a model says otherwise below.
DEFAULT_TOL = (1e-5, 1e-6)


# ---- Models -----------------------------------------------------------------------------
# Each model is a function of float32 tensors returning a list of tensors. The same Python
# function is traced into a tf.function (v2) and into a compat.v1 graph (v1).


def m_count(x):
    """A counting while_loop: 10 iterations of v = v * 0.9 + 1."""
    i0 = tf.constant(0)

    def body(i, v):
        return i + 1, v * 0.9 + 1.0

    _, v = tf.while_loop(lambda i, v: i < 10, body, [i0, x])
    return [v]


def m_cond_in_while(x):
    """A while_loop whose body takes one of two branches of a tf.cond."""
    i0 = tf.constant(0)

    def body(i, v):
        v = tf.cond(tf.reduce_sum(v) > 4.0, lambda: v * 0.5, lambda: tf.tanh(v) + 1.0)
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 6, body, [i0, x])
    return [v]


def m_nested(x):
    """A while_loop (4 iterations) around another (3 iterations)."""
    i0 = tf.constant(0)

    def outer(i, v):
        def inner(j, w):
            return j + 1, w * 0.8 + tf.cast(j, tf.float32) * 0.1

        _, w = tf.while_loop(lambda j, w: j < 3, inner, [tf.constant(0), v])
        return i + 1, tf.tanh(w) + v * 0.5

    _, v = tf.while_loop(lambda i, v: i < 4, outer, [i0, x])
    return [v]


def m_cond_with_loop(x):
    """Two tf.conds whose true branches run a while_loop: the first is taken, the second not."""

    def loop(v0):
        def body(i, v):
            return i + 1, tf.tanh(v) * 1.5 + 0.25

        _, v = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), v0])
        return v

    s = tf.reduce_sum(x)
    y = tf.cond(s < 0.0, lambda: loop(x), lambda: tf.tanh(x) * x)
    z = tf.cond(s > 0.0, lambda: loop(y), lambda: tf.tanh(y) * x)
    return [y, z]


def m_while_cond_loop(x):
    """A while_loop whose body holds a tf.cond whose true branch runs another while_loop."""

    def outer(i, v):
        def inner():
            def body(j, w):
                return j + 1, tf.tanh(w) * 1.2 + 0.1

            _, w = tf.while_loop(lambda j, w: j < 2, body, [tf.constant(0), v])
            return w

        v = tf.cond(tf.reduce_sum(v) < 0.5, inner, lambda: v * 0.5)
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 4, outer, [tf.constant(0), x])
    return [v]


def tanh_loop(v0, n):
    """n iterations of v = tanh(v) * 1.5 + 0.25 (a loop for the models below to nest)."""
    _, v = tf.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, tf.tanh(v) * 1.5 + 0.25),
                         [tf.constant(0), v0])
    return v


def m_while_two_conds(x):
    """A while_loop whose body holds two tf.conds, each with a while_loop in one branch."""

    def body(i, v):
        v = tf.cond(tf.reduce_sum(v) < 0.5, lambda: tanh_loop(v, 2), lambda: v * 0.5)
        v = tf.cond(v[0] > 0.3, lambda: v * 1.1, lambda: tanh_loop(v * 0.9, 1))
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 3, body, [tf.constant(0), x])
    return [v]


def m_cond_in_cond(x):
    """A tf.cond whose true branch holds a tf.cond whose true branch runs a while_loop."""
    s = tf.reduce_sum(x)

    def outer_true():
        return tf.cond(x[0] > 0.0, lambda: tanh_loop(x, 3) * 2.0, lambda: tf.tanh(x))

    return [tf.cond(s < 0.0, outer_true, lambda: x * x)]


def m_cond(x):
    """Two tf.conds without loops, one taking each branch: sin, x * x and tanh."""
    s = tf.reduce_sum(x)
    y = tf.cond(s < 0.0, lambda: tf.sin(x) * x, lambda: tf.tanh(x))
    return [tf.cond(s > 0.0, lambda: y * x, lambda: tf.tanh(y))]


def m_map_fn(x):
    """tf.map_fn over the rows of a [4, 3] matrix."""
    return [tf.map_fn(lambda r: tf.reduce_sum(tf.tanh(r) * r), x)]


def m_scan(x):
    """tf.scan over the rows of a [5, 3] matrix."""
    return [tf.scan(lambda a, r: a * 0.5 + tf.tanh(r), x, initializer=tf.zeros([3]))]


def m_foldl(x):
    """tf.foldl over the rows of a [5, 3] matrix."""
    return [tf.foldl(lambda a, r: a + r * r, x, initializer=tf.zeros([3]))]


def m_data_dep(x, limit):
    """A while_loop whose trip count depends on the input values."""

    def body(v):
        return [v * 1.5 + 0.25]

    v = tf.while_loop(lambda v: tf.reduce_sum(v) < limit, body, [x])
    return [v[0] if isinstance(v, (list, tuple)) else v]


def m_rnn(x, h0, w, u, b):
    """A tanh RNN over a [T, B, D] sequence: h = tanh(x_t W + h U + b), all h stacked."""
    steps = tf.shape(x)[0]
    acc = tf.TensorArray(tf.float32, size=steps)

    def body(t, h, acc):
        h = tf.tanh(tf.matmul(x[t], w) + tf.matmul(h, u) + b)
        return t + 1, h, acc.write(t, h)

    _, h, acc = tf.while_loop(lambda t, h, acc: t < steps, body, [tf.constant(0), h0, acc])
    return [acc.stack(), h]


def m_lstm(x, h0, c0, wx, wh, b):
    """An LSTM over a [T, B, D] sequence (gates i, f, g, o), all h stacked, final c."""
    steps = tf.shape(x)[0]
    acc = tf.TensorArray(tf.float32, size=steps)

    def body(t, h, c, acc):
        z = tf.matmul(x[t], wx) + tf.matmul(h, wh) + b
        i, f, g, o = tf.split(z, 4, axis=1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return t + 1, h, c, acc.write(t, h)

    _, h, c, acc = tf.while_loop(lambda t, h, c, acc: t < steps, body,
                                 [tf.constant(0), h0, c0, acc])
    return [acc.stack(), c]


def m_ta_scalars(x, w):
    """A while_loop reading the scalar elements of a TensorArray unstacked from a 1-D input,
    s = s * 0.5 + x[i] * w, plus a read of the last element after the loop."""
    n = tf.shape(x)[0]
    ta = tf.TensorArray(tf.float32, size=n, clear_after_read=False).unstack(x)

    def body(i, s):
        return i + 1, s * 0.5 + ta.read(i) * w

    _, s = tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), tf.zeros([])])
    return [s + ta.read(n - 1)]


def m_ta_rows(x, w):
    """ta_scalars on the rows of a [4, 3] matrix, with a read of the first row after the
    loop."""
    n = tf.shape(x)[0]
    ta = tf.TensorArray(tf.float32, size=n, clear_after_read=False).unstack(x)

    def body(i, s):
        return i + 1, s * 0.5 + ta.read(i) * w

    _, s = tf.while_loop(lambda i, s: i < n, body, [tf.constant(0), tf.zeros([3])])
    return [s + ta.read(0)]


def m_ta_reads(x):
    """A while_loop reading two rows of a TensorArray unstacked from a [5, 3] input in each
    iteration, row t // 2 and row max(t - 1, 0): each row is read in several iterations, so
    the writes of TensorFlow's v1 gradient array to one index add up."""
    ta = tf.TensorArray(tf.float32, size=5, clear_after_read=False).unstack(x)

    def body(t, h):
        a = ta.read(t // 2)
        b = ta.read(tf.maximum(t - 1, 0))
        return t + 1, h * 0.5 + a * tf.tanh(h + b)

    _, h = tf.while_loop(lambda t, h: t < 5, body, [tf.constant(0), tf.zeros([3])])
    return [h]


def m_strided_slice(x):
    """Python indexing of a [4, 5, 3] tensor (StridedSlice with every mask, negative indices,
    negative strides, clamped bounds) and tf.slice with size -1."""
    return [x[-1], x[:, -1], x[..., ::-1], x[1:-1, ::2, tf.newaxis, 0], x[::-2, -2:, 1:],
            x[3:0:-2, 4:1:-1], x[-10:10, tf.newaxis], x[tf.newaxis, ..., -1],
            tf.slice(x, [1, 0, 1], [-1, 2, -1])]


def m_strided_slice_dyn(x):
    """strided_slice on a [?, 5, 3] input (a dynamic batch): negative indices into the dynamic
    dimension, slices of the static ones."""
    return [x[-1], x[:, -1], x[..., ::-1], x[:, 1:-1:2, 0], x[:2, tf.newaxis, ..., 1],
            x[-2, ::-2], tf.slice(x, [0, 1, 0], [-1, 2, -1])]


def m_slice_run_time(x):
    """Slices of a [?, ?, 3] input whose bounds depend on the run-time length (x[:, 1:],
    x[:, :-1], reversed and strided from the end) or are run-time values (t = half the length:
    x[:, :t], x[:, t:], x[:, t], x[1:, -t:]), Slice with size -1 from 1 on a dynamic dim, and
    the sparse softmax cross entropy of logits with a run-time number of classes (what
    teacher forcing and shifted-target losses write)."""
    t = tf.shape(x)[1] // 2
    logits = tf.reshape(x, [tf.shape(x)[0], -1])
    labels = tf.argmax(logits[:, ::2], -1, output_type=tf.int32)
    return [x[:, 1:], x[:, :-1] * 2.0, x[:, ::-1], x[:, -2::-2], x[:, :t], x[:, t:] * 0.5,
            x[:, t], x[1:, -t:], tf.slice(x, [0, 1, 0], [-1, -1, 2]),
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)]


def m_unary_math(x):
    """Unary math of one [?, 4] input in (-0.9, 0.9): trigonometric, hyperbolic and error
    functions, rounding (half to even), the NaN and infinity tests, reciprocals and roots."""
    s = x * 3.0
    r = tf.constant([[-2.5, -0.5, 1.5, 2.5]]) + 0.0 * x  # ties, half to even
    y = tf.sqrt(x + 2.0)
    return [
        tf.sin(x) + tf.cos(x) * tf.tan(x),
        tf.asin(x) * tf.acos(x) + tf.atan(x),
        tf.sinh(x) - tf.cosh(x),
        tf.math.erf(x) + tf.math.erfc(x) * x,
        tf.math.expm1(x),
        tf.round(s) + tf.round(r) + tf.math.rint(r) + tf.math.ceil(s) + x,
        tf.cast(tf.math.is_nan(tf.math.log(x)), tf.float32)
        + tf.cast(tf.math.is_inf(1.0 / (x - x)), tf.float32) * 2.0
        + tf.cast(tf.math.is_finite(tf.math.log(x)), tf.float32) * 4.0,
        tf.math.reciprocal(x + 2.0) + tf.raw_ops.Inv(x=x - 2.0) + tf.math.rsqrt(x + 2.0) + y,
        tf.math.square(x) + tf.math.squared_difference(x, y) + tf.math.log(x + 2.0),
    ]


def m_binary_math(x, y, d):
    """Binary math: atan2, the modulo and truncating divisions (f32 and i32, negative operands),
    the "no NaN" divisions and products, xlogy and xdivy, clipping and BiasAddV1. Their special
    cases (zeros) are constants plus 0 * the inputs: the inputs stay where every output is
    differentiable, so that finite differences check the gradients."""
    xi = tf.cast(x * 10.0, tf.int32)
    di = tf.cast(d * 4.0, tf.int32)
    ints = [tf.math.floormod(xi, di), tf.truncatemod(xi, di), tf.truncatediv(xi, di),
            tf.raw_ops.Mod(x=xi, y=di), tf.math.floordiv(xi, di)]
    # x, y: (0, 0), (2, 0), (-3, 0), (0, 2), (1.5, -0.5)...
    ex = tf.constant([[0.0, 2.0, -3.0, 0.0], [1.5, 0.0, -2.0, 0.5]]) + 0.0 * x
    ey = tf.constant([[0.0, 0.0, 0.0, 2.0], [-0.5, -1.0, 0.0, 3.0]]) + 0.0 * y
    ez = tf.abs(ey) + tf.constant([[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    return [
        tf.math.atan2(x, d),
        tf.math.floormod(x * 3.0 + 0.35, d) + tf.stop_gradient(tf.raw_ops.Mod(x=x * 3.0, y=d)),
        tf.stop_gradient(tf.truncatemod(x * 3.0, d) + tf.truncatediv(x * 3.0, d)),
        tf.math.divide_no_nan(x, y) + tf.math.multiply_no_nan(x, y),
        tf.math.xlogy(x, tf.abs(y)) + tf.math.xdivy(x, y),
        tf.math.divide_no_nan(ex, ey) + tf.math.multiply_no_nan(ex, ey) * 2.0
        + tf.math.xlogy(ex, ez) * 3.0 + tf.math.xdivy(ex, -ez) * 4.0,
        tf.raw_ops.ClipByValue(t=x, clip_value_min=tf.constant(-0.5),
                               clip_value_max=tf.constant(0.5)),
        tf.raw_ops.BiasAddV1(value=x, bias=d[0]),
    ] + [tf.cast(i, tf.float32) for i in ints]


def m_activations(x):
    """Activations of a [?, 5] input: softplus, softsign, elu, selu, leaky relu, relu6, both
    gelu forms, softmax and log softmax over the last axis."""
    s = x * 4.0
    return [
        tf.nn.softplus(s) + tf.nn.softsign(s),
        tf.nn.elu(s) + tf.nn.selu(s),
        tf.nn.leaky_relu(s, alpha=0.3) + tf.nn.relu6(s * 2.0),
        tf.nn.gelu(s) + tf.nn.gelu(s, approximate=True),
        tf.nn.softmax(s) * tf.nn.log_softmax(x),
    ]
def m_ta_dynamic(x, limit):
    """A dynamic_size TensorArray written in a while_loop whose trip count depends on the input
    values (v = v * 1.5 + 0.25 until sum(v) >= limit), then stacked, gathered at run-time
    indices (every other step, from the end) and read at its last index."""
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)

    def body(i, v, ta):
        v = v * 1.5 + 0.25
        return i + 1, v, ta.write(i, v * x)

    n, v, ta = tf.while_loop(lambda i, v, ta: tf.reduce_sum(v) < limit, body,
                             [tf.constant(0), x, ta])
    return [ta.stack(), ta.gather(tf.range(n - 1, -1, -2)), ta.read(n - 1) * v]


def m_ta_gather_scatter(x, w):
    """The rows of tanh(x) ([6, 3]) scattered to permuted indices of a TensorArray, read back in
    a while_loop into a second array written in reverse order, gathered in another order with
    two rows twice (the gradient of the gather scatters two rows to each of those indices, which
    TensorFlow's gradient array adds up)."""
    sc = tf.TensorArray(tf.float32, size=6).scatter([4, 0, 5, 2, 1, 3], tf.tanh(x))
    out = tf.TensorArray(tf.float32, size=6, clear_after_read=False)

    def body(i, out):
        return i + 1, out.write(5 - i, sc.read(i) * w * tf.cast(i + 1, tf.float32))

    _, out = tf.while_loop(lambda i, out: i < 6, body, [tf.constant(0), out])
    return [out.gather([5, 2, 0, 4, 1, 3, 2, 5])]


def m_ta_split_concat(x, w):
    """TensorArray split of tanh(x) * w ([6, 3]) into items of 2, 1 and 3 rows and concatenated
    again; the first 4 rows of x and the other 2, scaled, written to a second array and
    concatenated."""
    rows = tf.TensorShape([None, 3])
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False, element_shape=rows)
    c = ta.split(tf.tanh(x) * w, [2, 1, 3]).concat()
    out = tf.TensorArray(tf.float32, size=2, infer_shape=False, element_shape=rows)
    out = out.write(0, x[:4] * w).write(1, x[4:] * 2.0)
    return [c, out.concat()]
def m_dyn_loop(x, y):
    """Shapes that change or are unknown in while_loops: a [?, 3] value grown by concat each
    iteration (shape_invariants [None, 3]) goes through expand_dims, stack, squeeze, unstack and
    reshape with -1; a [?, ?] input (two dynamic dims) through the same ops, and a reshape to a
    run-time shape (its dims swapped) after the loop."""
    def grow(i, acc, s):
        acc = tf.concat([acc, tf.expand_dims(x[0], 0) * 0.5], 0)       # [?, 3]
        e = tf.expand_dims(acc, 0)                                      # [1, ?, 3]
        st = tf.stack([acc, acc * 2.0], axis=1)                         # [?, 2, 3]
        a, b = tf.unstack(st, axis=1)                                   # [?, 3] each
        r = tf.reshape(st, [-1, 3])                                     # [?, 3]
        s = s + tf.reduce_sum(tf.squeeze(e, [0]) * a) + tf.reduce_sum(r) - tf.reduce_sum(b)
        return i + 1, acc, s

    _, acc, s = tf.while_loop(lambda i, a, s: i < 3, grow, [tf.constant(0), x, tf.zeros([])],
                              shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3]),
                                                tf.TensorShape([])])

    def two(i, v):
        e = tf.expand_dims(v, 1)                                        # [?, 1, ?]
        st = tf.stack([v, v * 0.5])                                     # [2, ?, ?]
        p, q = tf.unstack(st)
        sq = tf.squeeze(e, [1])                                         # [?, ?]
        return i + 1, tf.tanh(sq) * q + p * 0.25

    _, v = tf.while_loop(lambda i, v: i < 2, two, [tf.constant(0), y])
    swapped = tf.reshape(v, tf.stack([tf.shape(v)[1], tf.shape(v)[0]]))
    return [acc, s, v, swapped, tf.reshape(v, [-1]), tf.expand_dims(v, -1)]


def m_ta_dyn(x):
    """A TensorArray written with rows of a growing [?, 3] value in one while_loop (its element
    shape unknown to TensorFlow) and read in a second; there the read goes through
    expand_dims, stack and squeeze, and is also carried as a loop value of unknown shape."""
    ta = tf.TensorArray(tf.float32, size=3, infer_shape=False)

    def write(i, ta, acc):
        acc = tf.concat([acc, x[0:1] * tf.cast(i + 1, tf.float32)], 0)
        return i + 1, ta.write(i, acc), acc

    _, ta, _ = tf.while_loop(lambda i, t, a: i < 3, write, [tf.constant(0), ta, x],
                             shape_invariants=[tf.TensorShape([]), None,
                                               tf.TensorShape([None, 3])])

    def read(i, s, last):
        e = ta.read(i)                                                  # unknown shape
        st = tf.stack([e, tf.squeeze(tf.expand_dims(e, 0), [0]) * 0.5], axis=-1)
        s = s + tf.reduce_sum(st) + tf.reduce_sum(tf.expand_dims(last, 1))
        return i + 1, s, e

    _, s, last = tf.while_loop(lambda i, s, l: i < 3, read,
                               [tf.constant(0), tf.zeros([]), tf.zeros([1, 3])],
                               shape_invariants=[tf.TensorShape([]), tf.TensorShape([]),
                                                 tf.TensorShape(None)])
    return [s, last, tf.stack([last, last])]
def m_reverse_onehot_argmax(x):
    """ReverseV2 (one and several axes), ArgMax / ArgMin (int64 and int32), Any / All, OneHot
    (axis -1 with on/off values, axis 0), where with broadcasting, BroadcastTo and Fill of a
    run-time shape, BroadcastArgs, InvertPermutation, EuclideanNorm, and a concat (ConcatOffset
    in its gradient). Integer and boolean results are cast to float32."""
    f = lambda t: tf.cast(t, tf.float32)  # noqa: E731
    r0 = tf.reverse(x, [0])
    r1 = tf.reverse(x, [-1, 0])
    am = tf.argmax(x, axis=1, output_type=tf.int64)
    an = tf.argmin(x, axis=0, output_type=tf.int32)
    pos = x > 0.0
    anyr = tf.reduce_any(pos, axis=1)
    allc = tf.reduce_all(pos, axis=0, keepdims=True)
    oh = tf.one_hot(am, 4, on_value=2.0, off_value=-0.5)
    oh0 = tf.one_hot(an, 3, axis=0)
    w = tf.where(pos, x, 0.1 * x)
    wb = tf.where(x[:, :1] > 0.0, x, tf.zeros([4]))
    bt = tf.broadcast_to(x[0], tf.shape(x))
    ba = tf.broadcast_dynamic_shape(tf.shape(x), tf.constant([1, 4]))
    fl = tf.fill(tf.shape(x), 0.5)
    ip = tf.math.invert_permutation(tf.constant([2, 0, 3, 1]))
    en = tf.math.reduce_euclidean_norm(x, axis=1)
    c = tf.concat([x, r1 * 2.0, x[:, :2]], axis=1)
    return [r0, r1, f(am), f(an), f(anyr), f(allc), oh, oh0, w, wb, bt * x, f(ba), fl * x,
            f(ip), en, c * c]


def m_index_dyn(x):
    """reverse_onehot_argmax's ops and the scans on a [?, 4] input (a dynamic batch)."""
    f = lambda t: tf.cast(t, tf.float32)  # noqa: E731
    am = tf.argmax(x, axis=1)
    pos = x > 0.0
    return [tf.reverse(x, [0]), tf.reverse(x, [0, 1]), f(am), f(tf.argmin(x, axis=0)),
            f(tf.reduce_any(pos, axis=0)), f(tf.reduce_all(pos, axis=1)),
            tf.one_hot(am, 4, on_value=3.0, off_value=1.0), tf.where(pos, x, -x),
            tf.broadcast_to(tf.reduce_sum(x, axis=0, keepdims=True), tf.shape(x)),
            tf.fill(tf.shape(x), 0.25),
            tf.math.reduce_euclidean_norm(x, axis=0),
            tf.math.cumsum(x, axis=0, exclusive=True), tf.math.cumprod(x, axis=0, reverse=True),
            tf.math.cumsum(x, axis=1, reverse=True)]


def m_cumulative(x):
    """Cumsum and Cumprod along each axis, exclusive and reverse, of a [3, 5] input."""
    return [tf.math.cumsum(x, axis=1), tf.math.cumsum(x, axis=0, exclusive=True),
            tf.math.cumsum(x, axis=-1, reverse=True),
            tf.math.cumsum(x, axis=1, exclusive=True, reverse=True),
            tf.math.cumprod(x, axis=1), tf.math.cumprod(x, axis=0, exclusive=True),
            tf.math.cumprod(x, axis=1, reverse=True),
            tf.math.cumprod(x, axis=0, exclusive=True, reverse=True)]


def m_mirror_pad(x):
    """MirrorPad, REFLECT and SYMMETRIC, on both axes of a [4, 5] input and on a [2, 2, 5]
    reshape of it (padding one axis, then all three), squared so that the gradient
    (MirrorPadGrad) adds different values where rows are mirrored."""
    y = tf.reshape(x[:, :5], [2, 2, 5])
    return [tf.square(tf.pad(x, [[1, 2], [0, 3]], "REFLECT")),
            tf.square(tf.pad(x, [[3, 0], [2, 5]], "SYMMETRIC")),
            tf.square(tf.pad(y, [[0, 0], [1, 1], [0, 0]], "REFLECT")),
            tf.square(tf.pad(y, [[1, 2], [2, 0], [4, 1]], "SYMMETRIC"))]


def m_gather_scatter_nd(x):
    """GatherNd (full and partial index depth), GatherV2 with batch_dims (axis at and after the
    batch dims), ScatterNd with duplicate indices, TensorScatterUpdate, TensorScatterAdd and
    UnsortedSegmentSum (negative ids dropped) of a [4, 3] input; the gradient of a plain gather
    holds UnsortedSegmentSum too."""
    return [tf.gather_nd(x, [[1, 2], [3, 0], [0, 0]]), tf.gather_nd(x, [[2], [0]]),
            tf.gather(tf.reshape(x, [2, 6]), [[5, 0, 2], [1, 1, 4]], batch_dims=1, axis=1),
            tf.gather(tf.reshape(x, [2, 2, 3]), [[2, 0], [1, 1]], batch_dims=1, axis=2),
            tf.scatter_nd([[1], [3], [1]], x[:3] * 2.0, [5, 3]),
            tf.tensor_scatter_nd_update(x, [[0, 1], [2, 2]], x[1, :2] * 10.0),
            tf.tensor_scatter_nd_add(x, [[3], [0]], x[:2] * 0.5),
            tf.gather(x, [2, 0, 2]) * 3.0,
            tf.math.unsorted_segment_sum(x, [1, -1, 0, 1], 3)]


def m_topk_einsum(x):
    """TopKV2 (values and int32 indices; ties by lower index), two-operand Einsum (matmul,
    batched, transposed, matrix-vector, contraction over the first axis, an outer product, a
    full contraction) and BatchMatMulV2 with broadcast batch dims, of a [4, 6] input."""
    f = lambda t: tf.cast(t, tf.float32)  # noqa: E731
    v, i = tf.math.top_k(x, k=3)
    tv, ti = tf.math.top_k(tf.floor(x * 2.0), k=4)
    x2, x3, x4 = tf.reshape(x, [6, 4]), tf.reshape(x, [2, 2, 6]), tf.reshape(x, [2, 6, 2])
    return [v, f(i), tv, f(ti), tf.einsum("ij,jk->ik", x, x2), tf.einsum("bij,bjk->bik", x3, x4),
            tf.einsum("ij,kj->ik", x, x * 0.5), tf.einsum("ij,j->i", x, x[0]),
            tf.einsum("ij,ik->jk", x, x[:, :3]), tf.einsum("bi,bj->bij", x[:, :2], x[:, 2:5]),
            tf.einsum("ij,ij->", x, x), tf.matmul(x3, tf.reshape(x, [1, 6, 4]))]


def m_einsum_multi(x, y, s, v):
    """tf.einsum of three and four operands, which TensorFlow splits into two-operand Einsums
    (its order from opt_einsum): a batched chain, a chain of four matrices, an outer product of
    three vectors, a repeated letter in one operand (a diagonal) and a trace; their gradients
    hold one-operand Einsums and letters repeated in the output ("i->ii"). Ellipses: a batch of
    1 broadcast against 2 ("...ij,...jk->...ik"), and "a...->...a"."""
    return [tf.einsum("...ij,...jk->...ik", x[:1], y), tf.einsum("a...->...a", s),
            tf.einsum("bij,bjk,bkl->bil", x, y, x),
            tf.einsum("ij,jk,kl,lm->im", x[0], y[0], x[1], y[1]),
            tf.einsum("i,j,k->ijk", v, x[0, 0], y[1, :, 2]),
            tf.einsum("iij,jk,k->i", s, y[0], v),
            tf.einsum("ii->i", s[:, :, 1]), tf.einsum("ii->", s[:, :, 2]),
            tf.einsum("ij->ji", x[1])]


def m_xent_losses(x):
    """SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits of [4, 5] logits,
    with softmax labels and class indices. (With a dynamic batch, tf.nn's wrappers reshape the
    logits to run-time shapes.)"""
    e = np.exp(rnd(40, [4, 5]))
    labels = tf.constant(e / e.sum(axis=1, keepdims=True))
    return [tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x),
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1, 0, 4, 2]),
                                                           logits=x * 2.0)]


def m_push_back_batch(x):
    """TensorListPushBackBatch, which only tf.raw_ops writes (tf.vectorized_map vectorizes
    TensorList pushes without it): two vectors of three lists (Pack of variants), one
    of lists that hold one row of x[0] each, one of empty lists, carried through a while_loop
    that pushes row b of a [3, 2] tensor onto list b each step, then taken apart (Unpack) and
    stacked, of a [4, 3, 2] input."""
    raw = tf.raw_ops
    shape = tf.constant([2], tf.int32)
    full = tf.stack([raw.TensorListFromTensor(tensor=x[0, b:b + 1], element_shape=shape)
                     for b in range(3)])
    empty = tf.stack([raw.EmptyTensorList(element_shape=shape, max_num_elements=-1,
                                          element_dtype=tf.float32) for _ in range(3)])

    def body(i, full, empty):
        row = x[i]
        return (i + 1, raw.TensorListPushBackBatch(input_handles=full, tensor=tf.tanh(row)),
                raw.TensorListPushBackBatch(input_handles=empty,
                                            tensor=row * tf.cast(i, tf.float32)))

    _, full, empty = tf.while_loop(lambda i, f, e: i < 4, body, [tf.constant(1), full, empty])
    return [raw.TensorListStack(input_handle=h, element_shape=shape, element_dtype=tf.float32)
            for h in tf.unstack(full, num=3) + tf.unstack(empty, num=3)]


def m_where(x):
    """One-operand tf.where: the coordinates of the true elements of a mask (rank 2 and 3), of
    the nonzero elements of a float and an int tensor (rank 2 and 1), of an all-false mask (no
    rows; TensorFlow's Where takes no scalar); gather_nd, boolean_mask and scatter_nd at what
    they select; and a where in a while_loop's body whose row count changes every iteration.
    Integer results are cast to float32. (Gradients: no op multiplies a tensor of run-time
    shape, which would need BroadcastGradientArgs of run-time shapes.)"""
    f = lambda t: tf.cast(t, tf.float32)  # noqa: E731
    pos = x > 0.0
    w_bool = tf.where(pos)
    w_none = tf.where(x > 100.0)
    r = tf.round(x * 2.0)
    w_float = tf.where(r)
    w_int = tf.where(tf.cast(r, tf.int32)[0])
    w3 = tf.where(tf.reshape(x, [2, 3, 2]) < -0.3)
    g = tf.square(tf.gather_nd(x, w_bool))
    rows = x[:, 0] > 0.0
    bm = tf.boolean_mask(x, rows)
    back = tf.scatter_nd(tf.where(rows), bm, [3, 4])

    def body(i, acc):
        idx = tf.where(x > tf.cast(i, tf.float32) * 0.3 - 0.5)
        m = tf.scatter_nd(idx, tf.gather_nd(x, idx), [3, 4])
        return i + 1, acc + tf.reduce_sum(m * m)

    _, acc = tf.while_loop(lambda i, a: i < 4, body, [tf.constant(0), tf.constant(0.0)])
    return [f(w_bool), f(w_none), f(w_float), f(w_int), f(w3), g, bm, back * x, acc]


def m_bcast_dyn(x, y):
    """Binary ops between a [?, 3] input and a [3] one, whose gradients TensorFlow sums with
    BroadcastGradientArgs of run-time shapes (Sum over run-time axes, Reshape to a run-time
    shape), and tf.tile with run-time multiples of both. With the input's two rows, p is
    [1, 3] at run time: p * cos(x) broadcasts along a dimension neither type knows."""
    n = tf.shape(x)[0]
    a = x * y + x / y - y
    b = tf.maximum(x, y * 0.5) + tf.square(x - y)
    t = tf.tile(x, tf.stack([n, 2]))
    u = tf.tile(y[None, :], tf.stack([n, 1])) * tf.sin(x)
    p = tf.reshape(y, tf.stack([n - 1, 3]))
    return [a, b, t, u, p * tf.cos(x)]


def m_segments(x):
    """The sorted segment reductions of a [6, 3] input with ids [0, 0, 1, 3, 3, 3] (segment 2
    empty: 0), and the unsorted ones (mean as TensorFlow composes it, max, min, prod; ids
    [2, 0, 2, 1, 0, 2], num_segments 3)."""
    ids = tf.constant([0, 0, 1, 3, 3, 3])
    uids = tf.constant([2, 0, 2, 1, 0, 2])
    return [tf.math.segment_sum(x, ids), tf.math.segment_mean(x, ids),
            tf.math.segment_max(x, ids), tf.math.segment_min(x, ids),
            tf.math.segment_prod(x, ids), tf.math.unsorted_segment_mean(x, uids, 3),
            tf.math.unsorted_segment_max(x, uids, 3), tf.math.unsorted_segment_min(x, uids, 3),
            tf.math.unsorted_segment_prod(x, uids, 3)]


def m_band_part(x):
    """tf.linalg.band_part of a [4, 5] input: lower triangle (a causal mask), a band of one
    below and two above, the upper triangle of a batch of two, the diagonal."""
    return [tf.linalg.band_part(x, -1, 0), tf.linalg.band_part(x, 1, 2),
            tf.linalg.band_part(tf.stack([x, x * 2.0]), 0, -1), tf.linalg.band_part(x, 0, 0)]


def m_matrix_diag(x, d):
    """Diagonals: the similarity of the l2-normalized rows of a [4, 3] input less tf.eye of
    the batch (MatrixDiagV3), the diagonal of its square (MatrixDiagPartV3, whose gradient is
    a MatrixDiagV3), tf.linalg.diag and set_diag of a [3] input (MatrixSetDiagV3, also in the
    gradient), and tf.nn.l2_loss (L2Loss). Static shapes: compiled for both targets, the
    gradients of a dynamic batch take seconds; tests/lit/tf/legalize-diag-dynamic.eddy runs
    the diagonals of a run-time length."""
    e = tf.math.l2_normalize(x, axis=-1)
    sim = tf.matmul(e, tf.linalg.matrix_transpose(e))
    m = tf.ones([3, 3]) * d[:, None]
    return [sim - tf.eye(tf.shape(x)[0]), tf.linalg.diag_part(sim * sim),
            tf.linalg.diag(d) * 2.0 + tf.linalg.set_diag(m, d * d), tf.nn.l2_loss(x)]


def m_matrix_diag_band(x, d):
    """Bands of diagonals k = [lo, hi] of a [2, 4, 5] input x and diagonals d [2, 3, 4]:
    diag_part of k = (-1, 2) (MatrixDiagPartV3, RIGHT_LEFT) and of k = 1 LEFT_RIGHT in float64
    (cast back), set_diag of k = (0, 2) RIGHT_RIGHT, diag of k = (-1, 1) LEFT_LEFT into 4 x 5
    and of k = 2 with its default size, padded with 0.5; MatrixDiagV2, MatrixDiagPartV2 and
    MatrixSetDiagV2 of bands; MatrixDiag, MatrixDiagPart and MatrixSetDiag (v1, the main
    diagonal of non-square matrices). Their gradients are each other."""
    return [
        tf.linalg.diag_part(x, k=(-1, 2), padding_value=0.25),
        tf.cast(tf.linalg.diag_part(tf.cast(x, tf.float64), k=1, align="LEFT_RIGHT"),
                tf.float32),
        tf.linalg.set_diag(x, d * d, k=(0, 2), align="RIGHT_RIGHT"),
        tf.linalg.diag(d, k=(-1, 1), num_rows=4, num_cols=5, align="LEFT_LEFT"),
        tf.linalg.diag(d[:, 0], k=2, padding_value=0.5),
        tf.raw_ops.MatrixDiagPartV2(input=x, k=[-2, 0], padding_value=1.0),
        tf.raw_ops.MatrixDiagV2(diagonal=d[:, :2, :], k=[1, 2], num_rows=-1, num_cols=6,
                                padding_value=-1.0),
        tf.raw_ops.MatrixSetDiagV2(input=x, diagonal=d[:, :2, :], k=[-1, 0]),
        tf.raw_ops.MatrixDiag(diagonal=d) * 2.0,
        tf.raw_ops.MatrixDiagPart(input=x),
        tf.raw_ops.MatrixSetDiag(input=x, diagonal=d[:, 1, :] * 3.0),
    ]


def m_max_pool_v2(x):
    """MaxPoolV2, whose ksize and strides are constant inputs (SAME with strides 2 and 1,
    VALID), and its gradient MaxPoolGradV2, of a [2, 6, 7, 3] input."""
    return [tf.raw_ops.MaxPoolV2(input=x, ksize=[1, 2, 3, 1], strides=[1, 2, 2, 1],
                                 padding="SAME"),
            tf.raw_ops.MaxPoolV2(input=x * 0.5, ksize=tf.constant([1, 3, 2, 1]),
                                 strides=tf.constant([1, 1, 2, 1]), padding="VALID"),
            tf.raw_ops.MaxPoolV2(input=x, ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1],
                                 padding="SAME")]


def m_resize_modes(x):
    """ResizeBicubic with half-pixel centers (what tf.image.resize and Keras' Resizing write
    for "bicubic"), legacy (down to 3 x 3) and with align_corners; ResizeArea (down in height,
    up in width; align_corners) of a [?, 5, 4, 3] input. TensorFlow registers no gradient for
    ResizeArea, so its outputs pass through stop_gradient; the bicubic gradients are
    ResizeBicubicGrad."""
    area = [tf.raw_ops.ResizeArea(images=x, size=[3, 7]),
            tf.raw_ops.ResizeArea(images=x * 2.0, size=[4, 2], align_corners=True)]
    return [tf.raw_ops.ResizeBicubic(images=x, size=[7, 6], half_pixel_centers=True),
            tf.raw_ops.ResizeBicubic(images=x, size=[3, 3]),
            tf.raw_ops.ResizeBicubic(images=x * 0.5, size=[8, 7], align_corners=True)] + \
        [tf.stop_gradient(a) for a in area]


def m_fake_quant(x):
    """Fake quantization as quantization-aware training writes it: fixed ranges (8 bits, and 4
    bits narrow) and a range from the data (reduce_min and reduce_max, 6 bits); the gradients
    pass dy inside the nudged range (the straight-through estimator) and sum it below and above
    the range into min and max."""
    return [tf.quantization.fake_quant_with_min_max_args(x, -1.5, 2.0, num_bits=8),
            tf.quantization.fake_quant_with_min_max_args(x * 2.0, -3.0, 3.0, num_bits=4,
                                                         narrow_range=True),
            tf.quantization.fake_quant_with_min_max_vars(x, tf.reduce_min(x) * 0.8,
                                                         tf.reduce_max(x) * 0.9, num_bits=6)]


def m_stateless_random(x):
    """tf.random.stateless_uniform (f64; f32 in the dropout), stateless_normal (f32 and f64)
    and the integer uniforms (int32, and int64 over a range wider than 2^32, taken mod a prime
    to keep its low bits), all on a seed known at run time (from the dynamic batch of a [?, 6]
    input); stateless_dropout of x (a uniform of x's run-time shape), whose gradient is the
    mask; a loop drawing noise on a seed of its counter; and the bitwise ops (BitwiseAnd, Or,
    Xor, Invert, LeftShift and RightShift with counts outside [0, 31], which TensorFlow
    clamps) of run-time integers. Each matches TensorFlow's Philox stream bit for bit (the
    normals to the rounding of log, sin and cos)."""
    n = tf.shape(x)[0]
    seed = tf.stack([n * 3, -5])
    u64 = tf.random.stateless_uniform([5], seed=seed, dtype=tf.float64)
    g = tf.random.stateless_normal([2, 5], seed=seed)
    g64 = tf.random.stateless_normal([7], seed=seed, dtype=tf.float64)
    k32 = tf.random.stateless_uniform([9], seed=seed, minval=-5, maxval=100, dtype=tf.int32)
    k64 = tf.random.stateless_uniform([5], seed=tf.cast(seed, tf.int64), minval=-5,
                                      maxval=10**12, dtype=tf.int64)
    drop = tf.nn.experimental.stateless_dropout(x, 0.5, seed=seed)

    def body(i, acc):
        return i + 1, acc + tf.random.stateless_normal([3], seed=tf.stack([i, 5]))

    _, noise = tf.while_loop(lambda i, acc: i < n + 2, body, [tf.constant(0), tf.zeros([3])])
    ints = tf.range(-20, 20) * (n * 37 + 1)
    counts = tf.range(-3, 37) + n - 3
    bits = [tf.bitwise.bitwise_and(ints, 0x5A5), tf.bitwise.bitwise_or(ints, counts),
            tf.bitwise.bitwise_xor(ints, -77), tf.bitwise.invert(ints),
            tf.bitwise.left_shift(ints, counts) % 65536, tf.bitwise.right_shift(ints, counts)]
    f32 = lambda v: tf.cast(v, tf.float32)
    return [f32(u64), g, f32(g64), f32(k32), f32(k64 % 1000003), drop, noise] + \
        [f32(b) for b in bits]


def m_ctc_greedy(x):
    """tf.nn.ctc_greedy_decoder of [?, 3, 5] time-major logits (a dynamic number of steps)
    with sequence lengths of the run-time length, one row cut to 2 steps and one empty, with
    and without merge_repeated (repeats made sure by copying steps), and a blank index of 0;
    tf.sparse.to_dense of each result (default -1), its log-probability, indices and dense
    shape. TensorFlow registers no gradient."""
    t = tf.shape(x)[0]
    x = tf.concat([x[:2], x[1:2], x[2:]], axis=0)  # step 2 repeats step 1
    lens = tf.stack([t + 1, 2, 0])
    (dec,), lp = tf.nn.ctc_greedy_decoder(x, lens)
    (dec2,), lp2 = tf.nn.ctc_greedy_decoder(x, lens, merge_repeated=False, blank_index=0)
    f32 = lambda v: tf.cast(v, tf.float32)
    return [f32(tf.sparse.to_dense(dec, default_value=-1)), lp, f32(dec.indices),
            f32(dec.dense_shape), f32(tf.sparse.to_dense(dec2, default_value=-1)), lp2]


def m_pool3d(x):
    """tf.nn.max_pool3d and avg_pool3d of a [?, 5, 6, 4, 3] volume (a dynamic batch): VALID
    2x2x2 windows of stride 2 (the last depth and height dropped), and SAME windows of sizes
    (3, 2, 3) with strides (2, 1, 2), whose averages count only the elements inside the input;
    their gradients are MaxPool3DGrad and AvgPool3DGrad."""
    return [tf.nn.max_pool3d(x, 2, 2, "VALID"), tf.nn.avg_pool3d(x, 2, 2, "VALID"),
            tf.nn.max_pool3d(x, [1, 3, 2, 3, 1], [1, 2, 1, 2, 1], "SAME"),
            tf.nn.avg_pool3d(x, [1, 3, 2, 3, 1], [1, 2, 1, 2, 1], "SAME")]


def m_ragged(x):
    """A RaggedTensor of the rows of a [?, 2] input with run-time row lengths (2, n - 3, 0, 1:
    an empty row), to_tensor with its default (RaggedTensorToTensor; the width is the
    longest row), to_tensor cut to a width of 2, a ragged mean over the rows (segment ops),
    and the gradient through all of them."""
    n = tf.shape(x)[0]
    rt = tf.RaggedTensor.from_row_lengths(x, tf.stack([2, n - 3, 0, 1]))
    return [rt.to_tensor(default_value=-1.0), rt.to_tensor(shape=[None, 2, 2]) * 3.0,
            tf.reduce_sum(rt, axis=1)]


def m_bincount(x):
    """Counts of small integers made from a [?, 4] input (0..5; size 5 leaves the 5s out):
    tf.math.bincount per row (axis=-1, its size computed at run time), with weights, and
    Keras' CategoryEncoding in multi_hot and count modes (all DenseBincount; TensorFlow
    registers no gradient)."""
    ints = tf.minimum(tf.cast(tf.floor(tf.abs(x) * 6.0), tf.int32), 5)
    counts = tf.math.bincount(ints, minlength=5, maxlength=5, axis=-1)
    weighted = tf.math.bincount(ints, weights=x, minlength=5, maxlength=5, axis=-1)
    multi = tf.keras.layers.CategoryEncoding(num_tokens=6, output_mode="multi_hot")(ints)
    count = tf.keras.layers.CategoryEncoding(num_tokens=6, output_mode="count")(ints)
    return [tf.cast(counts, tf.float32), weighted, multi, count]


def m_loop_pred_cond(x):
    """A while_loop whose predicate holds a tf.cond (what AutoGraph writes for `while i < 10 and
    sum(v) < 20`), v = v * 1.5 + 0.5. Frozen lowered (`_lowered`), the cond sits in the loop
    frame's condition and reads the loop's values only inside its true branch."""

    def pred(i, v):
        return tf.cond(i < 10, lambda: tf.reduce_sum(v) < 20.0, lambda: tf.constant(False))

    _, v = tf.while_loop(pred, lambda i, v: (i + 1, v * 1.5 + 0.5), [tf.constant(0), x])
    return [v]


def m_decode_break(h0):
    """A greedy decoder as AutoGraph writes it (autograph=True): `for t in tf.range(12)` with an
    `if` on the logits and a `break` once every row emitted token 0, the tokens written to a
    dynamic-size TensorArray. Frozen lowered (`_lowered`), the conds of the body are v1 conds
    in the frame, which declare no shapes."""

    w, u, e = rnd(3011, [5, 6]), rnd(3012, [5, 5], 0.5), rnd(3013, [6, 5])

    @tf.function(autograph=True)
    def decode(h):
        toks = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        done = tf.zeros([2], tf.bool)
        total = tf.constant(0.0)
        for t in tf.range(12):
            logits = tf.matmul(h, w)
            tok = tf.argmax(logits, -1, output_type=tf.int32)
            if t > 0 and tf.reduce_sum(logits) < 0.0:
                total += 1.0
            else:
                total -= tf.reduce_max(logits) * 0.1
            toks = toks.write(t, tok)
            done = done | tf.equal(tok, 0)
            if tf.reduce_all(done):
                break
            h = tf.tanh(tf.matmul(h, u) + tf.gather(e, tok))
        return tf.cast(tf.transpose(toks.stack()), tf.float32), total, h

    toks, total, h = decode(h0)
    return [toks, total, h]


def m_top_k_run_time(x):
    """tf.math.in_top_k (InTopKV2: ties at the boundary count as in, a non-finite target
    prediction as out) and tf.math.top_k with a run-time k (half the batch) of a [?, 6] input
    (what accuracy metrics and samplers write)."""
    labels = tf.constant([1, 5, 2, 0])
    ties = tf.constant([[1.0, 2.0, 2.0, 0.0, 2.0, 3.0]]) + 0.0 * x
    nonfinite = tf.constant([[np.inf, 0.5, np.nan, 0.0, 1.0, -np.inf]]) + 0.0 * x
    vals, idx = tf.math.top_k(x, k=tf.shape(x)[0] // 2)
    return [tf.cast(tf.math.in_top_k(labels, x, 2), tf.float32),
            tf.cast(tf.math.in_top_k(labels, ties, 2), tf.float32),
            tf.cast(tf.math.in_top_k(labels, nonfinite, 3), tf.float32),
            vals * 2.0, tf.cast(idx, tf.float32)]


def m_ctc_loss(x):
    """tf.nn.ctc_loss of [8, 2, 5] time-major logits with dense labels (blank 0) of lengths 4
    and 2 and logit lengths 8 and 7: TensorFlow's dense implementation, forward-backward
    recursions written as scans over the time steps in log space (its Empty, the gradient
    through the scans)."""
    labels = tf.constant([[1, 2, 2, 3], [4, 1, 0, 0]], tf.int32)
    return [tf.nn.ctc_loss(labels, x, tf.constant([4, 2]), tf.constant([8, 7]),
                           logits_time_major=True, blank_index=0)]


def m_space_depth(x):
    """DepthToSpace and SpaceToDepth with block 2 (pixel shuffle; each is the other's gradient)
    and local response normalization (LRN, its gradient LRNGrad) of a [?, 4, 6, 8] input."""
    return [tf.nn.depth_to_space(x, 2), tf.nn.space_to_depth(x, 2) * 0.5,
            tf.nn.local_response_normalization(x, depth_radius=2, bias=1.5, alpha=0.3,
                                               beta=0.75)]


def m_crop_and_resize(x, b):
    """tf.image.crop_and_resize (the region-of-interest pooling of detection models) of a
    [?, 6, 5, 3] image at 4 boxes given as an input, one flipped and two reaching outside the
    image (the extrapolation value there): bilinear 3 x 4 crops, nearest 2 x 3 crops with
    extrapolation value 0.5, and 1 x 1 crops (the boxes' centres). Their gradients are
    CropAndResizeGradImage and CropAndResizeGradBoxes."""
    ind = tf.constant([0, 1, 1, 0])
    return [tf.image.crop_and_resize(x, b, ind, [3, 4]),
            tf.image.crop_and_resize(x * 0.5, b, ind, [2, 3], method="nearest",
                                     extrapolation_value=0.5),
            tf.image.crop_and_resize(x, b * 0.8, ind, [1, 1])]


# Boxes whose sampling points keep away from the image's grid lines and from the halfway
# points between them (where bilinear weights and nearest rounding jump, so finite differences
# do not measure a derivative).
CROP_BOXES = np.array([[0.167, 0.306, 0.678, 0.829], [-0.234, 0.036, 0.517, 1.328],
                       [0.737, 0.656, 0.214, 0.023], [0.331, 0.081, 0.558, 0.45]], np.float32)


def m_gather_batch_dyn(x, y):
    """tf.gather with batch_dims=1 and tf.one_hot on a dynamic batch (the beam search's
    gather of each batch row's surviving beams): indices [?, ?] from an argmax."""
    idx = tf.argmax(y, -1, output_type=tf.int32)
    g = tf.gather(x, idx, batch_dims=1)
    return [g * 2.0, tf.one_hot(idx, 5) * y]


def special_code(v):
    """v where finite, and 10 + 1 (NaN), 2 (+inf) or 4 (-inf) where not: fixtures compare
    numbers within a tolerance, so the special values become numbers."""
    fin = tf.math.is_finite(v)
    code = (tf.cast(tf.math.is_nan(v), v.dtype) + 2.0 * tf.cast(tf.equal(v, np.inf), v.dtype)
            + 4.0 * tf.cast(tf.equal(v, -np.inf), v.dtype))
    return tf.where(fin, v, 10.0 + code)


def m_gamma_family(x, y):
    """lgamma, digamma, polygamma and the Hurwitz zeta function of a [?, 5] input x in (0.2, 4)
    and of negative non-integers y (the reflection), and at their special values (poles,
    infinities, invalid orders) as constants plus zeros computed from x."""
    # Zeros that depend on x through an integer cast: no derivative reaches x from the special
    # values (eddy's gradient check also differentiates a copy without the stop_gradient).
    z = tf.cast(tf.cast(0.0 * x[0], tf.int32), tf.float32)
    ex = tf.constant([-np.inf, -3.0, 0.0, np.inf, 1e-4], tf.float32) + z
    n = tf.constant([0.0, 1.0, 1.5, -1.0, 2.0], tf.float32) + z
    q = tf.constant([2.0, -2.5, 0.5, 1.0, 0.0], tf.float32) + z
    zs = tf.constant([1.0, 0.5, 2.0, 2.0, 2.5, 3.0, 4.0, 3.0, 1.5], tf.float32) + z[0]
    zq = tf.constant([1.0, 1.0, -1.0, -1.5, -1.5, 0.0, -2.0, -2.5, 0.0], tf.float32) + z[0]
    special = tf.stop_gradient(tf.stack([
        special_code(tf.math.lgamma(ex)), special_code(tf.math.digamma(ex)),
        special_code(tf.math.polygamma(n, q))]))
    zspecial = tf.stop_gradient(special_code(tf.math.zeta(zs, zq)))
    return [
        tf.math.lgamma(x) + tf.math.lgamma(y) * 0.5,
        tf.math.digamma(x) + tf.math.digamma(y) * 0.5,
        tf.math.polygamma(tf.constant(1.0), x) + tf.math.polygamma(tf.constant(2.0), y) * 0.1,
        tf.math.polygamma(tf.constant(3.0), x + 1.0) * x,
        tf.math.zeta(tf.constant(3.0), x) + tf.math.zeta(tf.constant(2.0), x * 2.0),
        special,
        zspecial,
    ]


def m_special_fns2(u, v):
    """erfinv, ndtri, the modified Bessel functions i0e, i1e, i0, i1, the regularized
    incomplete gamma functions igamma, igammac and the incomplete beta function betainc of
    [?, 4] inputs u in (0.05, 0.95) and v in (0.5, 5) in float32 (erfinv of an empty slice),
    all but the Bessel functions again in float64 (the same inputs cast, the results cast
    back), and erfinv's, ndtri's (its tails at 1e-7 in float32 and 1e-30 in float64), i0e's
    and i1's special values as float64 constants plus zeros computed from u (eddy computes
    every dtype in float64, so these hold for float32 too; those of igamma, igammac and
    betainc, and betainc's scalar operands, are checked by tests/lit/tf/legalize-special-fns). The shape parameters a
    and b are stop_gradient'ed: TensorFlow differentiates igamma with respect to a by
    IgammaGradA, and registers no gradient of betainc with respect to a and b. Each op is a
    large composition to compile, so the fixture holds few of them."""
    z = tf.cast(tf.cast(0.0 * u[0], tf.int32), tf.float32)
    outs = []
    for dt in (tf.float32, tf.float64):
        c = lambda t: tf.cast(t, dt)
        uu, vv = c(u), c(v)
        w = (vv - 2.5) * 3.5  # (-7, 8.75): both sides of 0 and of 8
        a = tf.stop_gradient(vv)
        b = tf.stop_gradient(vv[::-1] * 0.5 + 0.5)
        x = vv * uu * 3.0  # x / a in (0.15, 2.85): the series and the continued fraction
        outs += [tf.math.erfinv(uu * 2.0 - 1.0), tf.math.ndtri(uu),
                 tf.math.igamma(a, x), tf.math.igammac(a * 0.5, x), tf.math.betainc(a, b, uu)]
        if dt == tf.float32:
            outs += [tf.math.special.bessel_i0e(w), tf.math.special.bessel_i1(w) * 0.1,
                     tf.math.special.bessel_i1e(w), tf.math.special.bessel_i0(w) * 0.1,
                     tf.math.erfinv(uu[:0]),
                     tf.stop_gradient(tf.math.ndtri(tf.constant([1e-7], dt) + z[0]))]
    k = lambda vals: tf.constant(vals, tf.float64) + tf.cast(z[0], tf.float64)
    inf = np.inf
    outs.append(tf.stop_gradient(tf.concat([
        special_code(tf.math.erfinv(k([-1.0, 1.0, 1.5, -2.0, 0.0, 0.999]))),
        special_code(tf.math.ndtri(k([0.0, 1.0, -0.1, 1.1, 1e-30, 1.0 - 2.0 ** -10]))),
        special_code(tf.math.special.bessel_i0e(k([inf, -inf, 0.0, -1.0]))),
        special_code(tf.math.special.bessel_i1(k([inf, -inf, 0.0, -1.0])))], 0)))
    # The float64 results as float32 (the loss adds them all).
    return [tf.cast(o, tf.float32) for o in outs]


def m_count_losses(x, k):
    """Count likelihoods of rates exp(x) ([?, 4]) against counts k >= 2 (the full
    log_poisson_loss jumps at k = 1): the full log_poisson_loss, a negative binomial
    log-likelihood (lgamma, xlogy, log1p), tf.nn.moments, clip_by_norm and digamma of the
    dispersion."""
    rate = tf.exp(x)
    r = tf.nn.softplus(x) + 0.5  # the dispersion
    pois = tf.nn.log_poisson_loss(k, x, compute_full_loss=True)
    nb = (tf.math.lgamma(k + r) - tf.math.lgamma(r) - tf.math.lgamma(k + 1.0)
          + tf.math.xlogy(r, r / (r + rate)) + tf.math.xlogy(k, rate)
          - k * tf.math.log1p(r + rate - 1.0))
    mean, var = tf.nn.moments(nb, axes=[0])
    return [pois, tf.clip_by_norm(nb, 3.0), mean, var, tf.math.digamma(r) * rate]


def m_einsum_dyn(x, y):
    """Shapes with two dynamic dims, [None, None, 3]: tf.einsum contracting the last axis,
    tf.gather_nd into both dynamic dims, tf.scatter_nd into tf.shape of the einsum's result, and
    tf.math.top_k, whose gradient scatters into the dynamic batch."""
    h = tf.einsum("btd,dv->btv", x, tf.constant(EINSUM_DYN_W))
    top, _ = tf.math.top_k(tf.reduce_max(h, 1), 2)
    pick = tf.gather_nd(h, [[1, 2], [0, 1], [1, 0]])
    spread = tf.scatter_nd([[0, 2], [1, 1]], tf.reduce_sum(y, 1)[:2], tf.shape(h))
    return [h * 0.5, top, pick, spread + h]


def m_cum_logsumexp(x):
    """tf.math.cumulative_logsumexp along both axes, exclusive and reversed (values 40 apart:
    one shift for the whole row would lose the small ones), Bucketize
    (tf.raw_ops.Bucketize, as tf.feature_column and Keras' Discretization write it) and
    reduce_prod (its gradient takes a ListDiff of the axes). The exclusive sums' empty
    first terms (-inf) are sliced off, so that the outputs' sum is finite."""
    big = x + tf.constant([[0.0, 40.0, -40.0, 0.0, 20.0]])
    return [tf.math.cumulative_logsumexp(big, axis=1),
            tf.math.cumulative_logsumexp(x, axis=0, exclusive=True, reverse=True)[:-1],
            tf.math.cumulative_logsumexp(big, axis=1, exclusive=True)[:, 1:],
            tf.cast(tf.raw_ops.Bucketize(input=x, boundaries=[-1.0, 0.0, 0.5, 2.0]), tf.float32),
            tf.reduce_prod(x, axis=1)]


def m_reverse_sequence(x, y):
    """tf.reverse_sequence time-major (seq_axis 0, batch_axis 1, lengths 3 and 5) of a [5, 2, 3]
    input, and along axis 1 of a [2, 4, 3, 2] one batched on axis 2 (lengths 1, 4, 2)."""
    return [tf.reverse_sequence(x, [3, 5], seq_axis=0, batch_axis=1) * x,
            tf.reverse_sequence(y, [1, 4, 2], seq_axis=1, batch_axis=2)]


def m_conv_pool(x, w):
    """Conv2D (SAME with stride 2, VALID, EXPLICIT pads), MaxPool and AvgPool
    (SAME and VALID, NHWC) of a [2, 7, 6, 3] input and a [3, 2, 3, 4] filter; the conv1d,
    max_pool1d and avg_pool1d of their first column (ExpandDims, Conv2D, Squeeze); a conv and
    a max pool in float64 (the result cast back)."""
    x1, w1 = x[:, :, 0, :], w[:, 0, :, :]
    xd, wd = tf.cast(x, tf.float64), tf.cast(w, tf.float64)
    return [tf.nn.conv2d(x, w, strides=(2, 1), padding="SAME"),
            tf.nn.conv2d(x, w, strides=1, padding="VALID"),
            tf.nn.conv2d(x, w, strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]]),
            tf.nn.max_pool2d(x, (2, 3), (2, 2), "SAME"),
            tf.nn.max_pool2d(x, (3, 2), (1, 2), "VALID"),
            tf.nn.avg_pool2d(x, (3, 2), (2, 2), "SAME"),
            tf.nn.avg_pool2d(x, (2, 2), 1, "VALID"),
            tf.nn.conv1d(x1, w1, stride=2, padding="SAME"),
            tf.nn.max_pool1d(x1, 2, 2, "VALID"),
            tf.nn.avg_pool1d(x1, 3, 1, "SAME"),
            tf.cast(tf.nn.max_pool2d(tf.nn.conv2d(xd, wd, strides=2, padding="SAME"), 2, 2,
                                     "VALID"), tf.float32)]


def m_conv_dilated(x, w):
    """Conv2D with dilations (2, 1) VALID and (1, 2) SAME of conv_pool's input and filter
    (TensorFlow's CPU kernels have no gradient of a dilated Conv2D: forward only)."""
    return [tf.nn.conv2d(x, w, strides=1, padding="VALID", dilations=(2, 1)),
            tf.nn.conv2d(x, w, strides=1, padding="SAME", dilations=(1, 2))]


def m_conv3d(x, w):
    """Conv3D (NDHWC) SAME with strides (2, 1, 2) and VALID of a [2, 5, 6, 4, 3] input and a
    [3, 2, 3, 3, 4] filter (TensorFlow's CPU kernels have no dilated Conv3D)."""
    return [tf.nn.conv3d(x, w, strides=(1, 2, 1, 2, 1), padding="SAME"),
            tf.nn.conv3d(x, w, strides=(1, 1, 1, 1, 1), padding="VALID")]


@tf.function
def switch_step(k, v):
    """tf.switch_case on k in a tf.function of its own: branches 0 and 2 keep different
    intermediates for the gradient (none, tanh(v), sin(v)), so cond_v2's Case returns an
    OptionalNone from branch 0."""
    return tf.switch_case(k, [lambda: v * 0.5, lambda: tf.tanh(v) + 1.0,
                              lambda: tf.sin(v) * v])


def m_switch_case(x):
    """tf.switch_case in a nested tf.function called in a while_loop, on the indices -1 (out of
    range: the last branch), 0, 1, 2 and 3 (out of range), then once after the loop on index 1.
    Freezing the v2 graph inlines the nested function and lowers its Case to _SwitchN and
    Merge (in the loop body and in the graph, the gradient's Case with it); frozen with
    lower_control_flow=True (`_lowered`), the loop is a v1 frame holding the _SwitchN, and the
    gradient's Optionals go on a list through the frame; the v1 graph keeps the function and
    its Case, and its gradient pushes the Case's Optionals on stacks."""

    def body(i, v):
        return i + 1, switch_step(i - 1, v) + 0.125

    i, v = tf.while_loop(lambda i, v: i < 5, body, [tf.constant(0), x])
    return [v, switch_step(i - 4, v * x)]
def m_case_in_loop(x):
    """tf.case with three predicates and a default in a while_loop body (seven iterations; from
    x, the branches taken are -v * 0.7, v + 0.5, v * 0.5, tanh(v) + 1.0, v * 0.5 twice, then
    tanh(v) + 1.0): cond_v2 nests three Ifs, each in the else branch of the one before. In the
    v2 gradient, the intermediates of the second If are a tensor (its then branch) or the
    third If's Optional (its else branch), so that output is an Optional of one type or of
    another; the first If wraps it in one more Optional, the loop pushes it on an
    accumulator, and the gradient loop pops it and unwraps it for the second If's gradient."""

    def body(i, v):
        s = tf.reduce_sum(v)
        v = tf.case([(s > 2.0, lambda: v * 0.5), (s < -2.0, lambda: -v * 0.7),
                     (tf.equal(i % 3, 0), lambda: tf.tanh(v) + 1.0)],
                    default=lambda: v + 0.5)
        return i + 1, v

    _, v = tf.while_loop(lambda i, v: i < 7, body, [tf.constant(0), x])
    return [v]


def spd(x):
    """x x^T + n I: symmetric positive definite, well conditioned."""
    n = tf.shape(x)[-1]
    return tf.matmul(x, x, transpose_b=True) + tf.cast(n, x.dtype) * tf.eye(n, dtype=x.dtype)


def m_linalg(x, b, c):
    """Dense linear algebra of a batch of two 3x3 matrices x and right-hand sides b [2, 3, 2]:
    tf.linalg.cholesky of spd(x) (its upper triangle set to garbage first: Cholesky reads the
    lower one), triangular_solve with the factor (lower; adjoint of a [3, 4] c, whose batch
    dims broadcast; upper, of one [3, 3] matrix against the batch), solve and inv of x (and
    the adjoint of solve), det and slogdet (sign times log|det|), and Cholesky and the adjoint
    of inv in float64.
    The gradients hold TensorFlow's rules: MatrixTriangularSolve, MatrixBandPart, the
    diagonals, MatMul, BroadcastGradientArgs over the batch shapes."""
    a = spd(x)
    a = tf.linalg.band_part(a, -1, 0) + tf.linalg.band_part(x, 0, -1) - tf.linalg.band_part(
        x, 0, 0)
    chol = tf.linalg.cholesky(a)
    sign, logdet = tf.linalg.slogdet(x)
    xd = tf.cast(x, tf.float64)
    return [chol, tf.linalg.triangular_solve(chol, b),
            tf.linalg.triangular_solve(chol, c, adjoint=True),
            tf.linalg.triangular_solve(tf.linalg.matrix_transpose(chol[0]), b, lower=False),
            tf.linalg.solve(x, b), tf.linalg.solve(x, b, adjoint=True), tf.linalg.inv(x),
            tf.linalg.det(x), sign * logdet,
            tf.cast(tf.linalg.cholesky(spd(xd)), tf.float32) * 0.5,
            tf.cast(tf.linalg.inv(xd, adjoint=True), tf.float32) * 0.5]


def m_linalg_dyn(x, b):
    """The same ops on a dynamic batch ([None, 3, 3] and [None, 3, 2]): Cholesky,
    triangular_solve, solve, and inv and logdet of an empty batch (x[:0])."""
    chol = tf.linalg.cholesky(spd(x))
    return [chol, tf.linalg.triangular_solve(chol, b), tf.linalg.solve(x, b),
            tf.linalg.inv(x[:0]), tf.linalg.slogdet(x[:0])[1]]


def m_data_dependent(x):
    """Ops whose result sizes depend on the data, on a vector of run-time length: Unique of
    small integers (first occurrences, repeats) and UniqueWithCounts of floats (int64 indices),
    DynamicPartition of [x, x^2] rows into 4 partitions, partition 2 empty (its gradient is
    TensorFlow's ParallelDynamicStitch of the partitioned positions), and HistogramFixedWidth of
    x and the range's edges, values below and above the range included (no gradients: Unique
    and HistogramFixedWidth have none)."""
    ids = tf.cast(tf.floor(tf.abs(x) * 2.0), tf.int32)
    y, idx = tf.unique(ids)
    uy, uidx, ucount = tf.unique_with_counts(tf.stop_gradient(tf.floor(x * 2.0)),
                                             out_idx=tf.int64)
    parts = tf.where(ids >= 2, 3, ids)
    rows = tf.stack([x, x * x], axis=1)
    split = tf.dynamic_partition(rows, parts, 4)
    hist = tf.histogram_fixed_width(tf.concat([x, [-1.0, 1.0, 0.2]], 0), [-1.0, 1.0], nbins=5)
    return [tf.cast(y, tf.float32), tf.cast(idx, tf.float32), uy, tf.cast(uidx, tf.float32),
            tf.cast(ucount, tf.float32)] + [tf.square(s) * (k + 1.0) for k, s in enumerate(split)] + \
        [tf.cast(hist, tf.float32)]


def rnd(seed, shape, scale=1.0):
    return (np.random.RandomState(seed).standard_normal(shape) * scale).astype(np.float32)


# gamma_family's negative input: between the poles, at least 0.25 from them.
GAMMA_Y = -(np.floor(np.abs(rnd(98, [2, 5])) * 2.0) + 0.25
            + 0.5 * np.random.RandomState(99).rand(2, 5)).astype(np.float32)

# Inputs of the math models, away from the steps of the roundings, modulos and casts (so that
# finite differences see no jump; the ties of round are constants in the model). unary_math: in
# (-0.9, 0.9), negative values included (log gives NaN). binary_math: divisors d of both signs.
UNARY_X = np.array([[-0.55, 0.2, 0.3, -0.8], [0.85, -0.1, 0.6, 0.05],
                    [0.45, -0.65, -0.3, 0.7]], np.float32)
BIN_X = np.array([[0.23, 1.35, -2.15, 0.77], [-0.42, -0.95, 1.64, -1.72]], np.float32)
BIN_Y = np.array([[0.6, -1.2, 1.5, -0.4], [2.0, 0.7, -1.1, 0.35]], np.float32)
BIN_D = np.array([[0.55, -0.8, 0.6, -1.3], [-0.45, 0.9, -0.55, 1.1]], np.float32)

# special_fns2's inputs: u in (0.05, 0.95); v in (0.5, 5) and at least 0.1 from 2.5, where
# the Bessel functions' argument 3.5 (v - 2.5) has the kink of |x| (i0e, i1e).
SPECIAL_U = np.random.RandomState(114).uniform(0.05, 0.95, [3, 4]).astype(np.float32)
SPECIAL_V = np.array([[0.7, 1.6, 2.2, 3.1], [4.9, 2.9, 1.1, 3.8],
                      [2.0, 4.2, 0.9, 2.7]], np.float32)

# where's input: away from its thresholds (0, the steps of round(2x), -0.3 and the loop's).
WHERE_X = np.array([[0.62, -0.41, 0.15, -0.9], [0.33, 0.05, -0.12, 1.4],
                    [-0.66, 0.88, -0.05, 0.52]], np.float32)

# segments' input: distinct values at least 0.2 apart, so that no max or min of a segment
# changes within the steps of finite differences.
SEGMENTS_X = (np.random.RandomState(37).permutation(18).reshape(6, 3) * 0.23 - 2.0).astype(
    np.float32)

EINSUM_DYN_W = np.random.RandomState(94).uniform(-1, 1, [3, 4]).astype(np.float32)

# cum_logsumexp's input: away from Bucketize's boundaries (-1, 0, 0.5, 2).
CUM_LSE_X = np.array([[0.3, -1.4, 2.6, 0.8, -0.2], [1.1, 0.15, -0.6, 2.3, 0.7],
                      [-0.35, 1.7, 0.9, -1.2, 0.25]], np.float32)

# data_dependent's input: repeated values of floor(|x| * 2) and floor(x * 2), away from their
# steps and from the histogram's bin edges (-1, -0.6, -0.2, 0.2, 0.6, 1).
DATA_DEP_X = np.array([0.3, -0.8, 1.7, 0.35, -0.3, 1.2, 0.7, -1.4, 2.3, 0.1], np.float32)

# name -> (function, [(input name, value)], tolerance or None)
T, B, D, H = 4, 2, 3, 3
MODELS = {
    "count": (m_count, [("x", rnd(1, [3]))], None),
    "cond_in_while": (m_cond_in_while, [("x", rnd(2, [3]))], None),
    "nested": (m_nested, [("x", rnd(3, [3]))], None),
    "map_fn": (m_map_fn, [("x", rnd(4, [4, 3]))], None),
    "scan": (m_scan, [("x", rnd(5, [5, 3]))], None),
    "foldl": (m_foldl, [("x", rnd(6, [5, 3]))], None),
    "data_dep": (m_data_dep, [("x", np.abs(rnd(7, [3])) + 0.1),
                              ("limit", np.array(40.0, np.float32))], None),
    "rnn": (m_rnn, [("x", rnd(8, [T, B, D])), ("h0", rnd(9, [B, H], 0.5)),
                    ("w", rnd(10, [D, H], 0.5)), ("u", rnd(11, [H, H], 0.5)),
                    ("b", rnd(12, [H], 0.1))], (1e-5, 1e-6)),
    "cond_with_loop": (m_cond_with_loop, [("x", rnd(19, [3]))], None),
    "while_cond_loop": (m_while_cond_loop, [("x", rnd(19, [3]))], None),
    "while_two_conds": (m_while_two_conds, [("x", rnd(19, [3]))], None),
    "cond_in_cond": (m_cond_in_cond, [("x", rnd(19, [3]))], None),
    "cond": (m_cond, [("x", rnd(19, [3]))], None),
    "lstm": (m_lstm, [("x", rnd(13, [T, B, D])), ("h0", rnd(14, [B, H], 0.5)),
                      ("c0", rnd(15, [B, H], 0.5)), ("wx", rnd(16, [D, 4 * H], 0.5)),
                      ("wh", rnd(17, [H, 4 * H], 0.5)), ("b", rnd(18, [4 * H], 0.1))],
             (1e-5, 1e-6)),
    "ta_scalars": (m_ta_scalars, [("x", rnd(19, [5])), ("w", np.array(0.7, np.float32))], None),
    "ta_rows": (m_ta_rows, [("x", rnd(20, [4, 3])), ("w", rnd(21, [3]))], None),
    "ta_reads": (m_ta_reads, [("x", rnd(3014, [5, 3]))], None),
    "strided_slice": (m_strided_slice, [("x", rnd(22, [4, 5, 3]))], None),
    "strided_slice_dyn": (m_strided_slice_dyn, [("x", rnd(23, [3, 5, 3]))], None),
    "slice_run_time": (m_slice_run_time, [("x", rnd(107, [2, 6, 3]))], None),
    "unary_math": (m_unary_math, [("x", UNARY_X)], (1e-5, 1e-5)),
    "binary_math": (m_binary_math, [("x", BIN_X), ("y", BIN_Y), ("d", BIN_D)], (1e-5, 1e-5)),
    "activations": (m_activations, [("x", rnd(26, [3, 5]))], (1e-5, 1e-5)),
    "ta_dynamic": (m_ta_dynamic, [("x", np.abs(rnd(24, [3])) + 0.1),
                                  ("limit", np.array(30.0, np.float32))], None),
    "ta_split_concat": (m_ta_split_concat, [("x", rnd(27, [6, 3])), ("w", rnd(28, [3]))],
                        None),
    "ta_gather_scatter": (m_ta_gather_scatter, [("x", rnd(25, [6, 3])), ("w", rnd(26, [3]))],
                          None),
    "dyn_loop": (m_dyn_loop, [("x", rnd(24, [2, 3])), ("y", rnd(25, [2, 4]))], None),
    "ta_dyn": (m_ta_dyn, [("x", rnd(26, [2, 3]))], None),
    "reverse_onehot_argmax": (m_reverse_onehot_argmax, [("x", rnd(24, [3, 4]))], None),
    "index_dyn": (m_index_dyn, [("x", rnd(25, [5, 4]))], None),
    "cumulative": (m_cumulative, [("x", rnd(26, [3, 5]) + 0.5)], None),
    "gather_scatter_nd": (m_gather_scatter_nd, [("x", rnd(27, [4, 3]))], None),
    "mirror_pad": (m_mirror_pad, [("x", rnd(43, [4, 5]))], None),
    "topk_einsum": (m_topk_einsum, [("x", rnd(28, [4, 6]))], None),
    "einsum_multi": (m_einsum_multi, [("x", rnd(32, [2, 3, 4])), ("y", rnd(33, [2, 4, 3])),
                                      ("s", rnd(34, [3, 3, 4])), ("v", rnd(35, [3]))], None),
    "xent_losses": (m_xent_losses, [("x", rnd(29, [4, 5]))], None),
    "where": (m_where, [("x", WHERE_X)], None),
    "push_back_batch": (m_push_back_batch, [("x", rnd(36, [4, 3, 2]))], None),
    "segments": (m_segments, [("x", SEGMENTS_X)], None),
    "band_part": (m_band_part, [("x", rnd(38, [4, 5]))], None),
    "matrix_diag": (m_matrix_diag, [("x", rnd(90, [4, 3])), ("d", rnd(91, [3]))], None),
    "matrix_diag_band": (m_matrix_diag_band, [("x", rnd(102, [2, 4, 5])), ("d", rnd(103, [2, 3, 4]))],
                         None),
    "max_pool_v2": (m_max_pool_v2, [("x", rnd(104, [2, 6, 7, 3]))], None),
    "resize_modes": (m_resize_modes, [("x", rnd(105, [2, 5, 4, 3]))], None),
    "decode_break": (m_decode_break, [("h0", rnd(301, [2, 5], 0.8))], None),
    "loop_pred_cond": (m_loop_pred_cond, [("x", rnd(111, [3]))], None),
    "bincount": (m_bincount, [("x", rnd(112, [3, 4]))], None),
    "stateless_random": (m_stateless_random, [("x", rnd(114, [3, 6]))], None),
    "ctc_greedy": (m_ctc_greedy, [("x", rnd(115, [6, 3, 5]))], None),
    "pool3d": (m_pool3d, [("x", rnd(116, [2, 5, 6, 4, 3]))], None),
    "ragged": (m_ragged, [("x", rnd(117, [7, 2]))], None),
    "fake_quant": (m_fake_quant, [("x", rnd(113, [3, 6]) * 2.0)], None),
    "top_k_run_time": (m_top_k_run_time, [("x", rnd(110, [4, 6]))], None),
    "ctc_loss": (m_ctc_loss, [("x", rnd(109, [8, 2, 5]))], (1e-4, 1e-5)),
    "space_depth": (m_space_depth, [("x", rnd(108, [2, 4, 6, 8]))], None),
    "crop_and_resize": (m_crop_and_resize, [("x", rnd(106, [2, 6, 5, 3])), ("b", CROP_BOXES)],
                        None),
    "gather_batch_dyn": (m_gather_batch_dyn, [("x", rnd(92, [2, 5, 3])), ("y", rnd(93, [2, 4, 5]))],
                         None),
    "cum_logsumexp": (m_cum_logsumexp, [("x", CUM_LSE_X)], None),
    "einsum_dyn": (m_einsum_dyn, [("x", rnd(95, [2, 5, 3])), ("y", rnd(96, [3, 4, 4]))], None),
    "reverse_sequence": (m_reverse_sequence, [("x", rnd(39, [5, 2, 3])), ("y", rnd(40, [2, 4, 3, 2]))],
                         None),
    "conv_pool": (m_conv_pool, [("x", rnd(41, [2, 7, 6, 3])), ("w", rnd(42, [3, 2, 3, 4], 0.5))],
                  None),
    "conv_dilated": (m_conv_dilated, [("x", rnd(41, [2, 7, 6, 3])),
                                      ("w", rnd(42, [3, 2, 3, 4], 0.5))], None),
    "conv3d": (m_conv3d, [("x", rnd(45, [2, 5, 6, 4, 3])), ("w", rnd(46, [3, 2, 3, 3, 4], 0.5))],
               None),
    "gamma_family": (m_gamma_family, [("x", np.abs(rnd(97, [2, 5])) * 1.5 + 0.2),
                                      ("y", GAMMA_Y)], None),
    "special_fns2": (m_special_fns2, [("u", SPECIAL_U), ("v", SPECIAL_V)], None),
    "count_losses": (m_count_losses, [("x", rnd(99, [3, 4], 0.5)),
                                      ("k", np.floor(np.abs(rnd(100, [3, 4])) * 3.0) + 2.0)], None),
    "switch_case": (m_switch_case, [("x", rnd(44, [3]))], None),
    "case_in_loop": (m_case_in_loop, [("x", rnd(48, [3]))], None),
    "bcast_dyn": (m_bcast_dyn, [("x", rnd(30, [2, 3])), ("y", np.abs(rnd(31, [3])) + 0.5)],
                  None),
    "linalg": (m_linalg, [("x", rnd(97, [2, 3, 3])), ("b", rnd(98, [2, 3, 2])),
                          ("c", rnd(99, [3, 4]))], None),
    "data_dependent": (m_data_dependent, [("x", DATA_DEP_X)], None),
    "linalg_dyn": (m_linalg_dyn, [("x", rnd(100, [2, 3, 3])), ("b", rnd(101, [2, 3, 2]))], None),
}

# Feeds declared with dynamic dimensions (None), by model; the others take their values'
# shapes. Their gradient fixtures take the same shapes (TensorFlow's gradients of broadcasting ops
# then compute shapes at run time: BroadcastGradientArgs).
FEED_SHAPES = {"strided_slice_dyn": {"x": [None, 5, 3]}, "slice_run_time": {"x": [None, None, 3]}, "unary_math": {"x": [None, 4]},
               "activations": {"x": [None, 5]},
               "dyn_loop": {"x": [None, 3], "y": [None, None]},
               "ta_dyn": {"x": [None, 3]}, "index_dyn": {"x": [None, 4]},
               "bcast_dyn": {"x": [None, 3]}, "gamma_family": {"x": [None, 5]}, "count_losses": {"x": [None, 4], "k": [None, 4]},
               "conv_pool": {"x": [None, 7, 6, 3]}, "resize_modes": {"x": [None, 5, 4, 3]},
               "crop_and_resize": {"x": [None, 6, 5, 3]}, "space_depth": {"x": [None, 4, 6, 8]},
               "top_k_run_time": {"x": [None, 6]}, "bincount": {"x": [None, 4]}, "stateless_random": {"x": [None, 6]}, "ctc_greedy": {"x": [None, 3, 5]}, "pool3d": {"x": [None, 5, 6, 4, 3]}, "ragged": {"x": [None, 2]}, "fake_quant": {"x": [None, 6]},
               "special_fns2": {"u": [None, 4], "v": [None, 4]},
               "conv3d": {"x": [None, 5, 6, 4, 3]},
               "gather_batch_dyn": {"x": [None, 5, 3], "y": [None, None, 5]},
               "einsum_dyn": {"x": [None, None, 3], "y": [None, None, 4]},
               "linalg_dyn": {"x": [None, 3, 3], "b": [None, 3, 2]},
               "data_dependent": {"x": [None]}}

# Models written without their gradients. TensorFlow registers no gradient for
# TensorListPushBackBatch (push_back_batch), DenseBincount (bincount) nor CTCGreedyDecoder
# (ctc_greedy); its CPU kernels compute no gradient of a dilated Conv2D (conv_dilated).
FORWARD_ONLY = {"push_back_batch", "conv_dilated", "bincount", "ctc_greedy"}

# Models written in these forms only (each fixture costs test time): their gradient
# fixtures hold the forward outputs too, and they have no control flow to tell v1 from v2.
ONLY_FORMS = {"matrix_diag_band": ("grad_v2",), "max_pool_v2": ("grad_v1",),
              "resize_modes": ("grad_v2",), "conv3d": ("grad_v2",),
              "crop_and_resize": ("grad_v2",), "space_depth": ("grad_v2",), "ctc_loss": ("v2", "grad_v2"),
              "top_k_run_time": ("grad_v2",),
              "loop_pred_cond": ("lowered", "grad_lowered"), "decode_break": ("lowered",),
              "bincount": ("v2",), "fake_quant": ("grad_v2",), "stateless_random": ("grad_v2",), "ctc_greedy": ("v2",), "pool3d": ("grad_v2",), "ragged": ("grad_v2",),
              "special_fns2": ("grad_v2",), "data_dependent": ("grad_v2",),
              "slice_run_time": ("grad_v1", "grad_v2"), "ta_reads": ("grad_v1", "grad_v2"),
              "scan": ("v1", "v2", "grad_v1", "grad_v2", "grad2_v2", "grad_lowered"),
              "case_in_loop": ("grad_v1", "grad_v2")}

# Gradient graphs chain more ops; their sums get a looser relative tolerance.
GRAD_TOL = (1e-4, 1e-5)


def dense_grad(g, a):
    """A gradient as a dense tensor: zeros for none, an embedding's IndexedSlices summed."""
    if g is None:
        return tf.zeros_like(a)
    return tf.convert_to_tensor(g)


def with_grads(fn):
    """The model's outputs, then d(sum of all outputs)/d(each float input)."""

    def run(*args):
        outs = fn(*args)
        loss = tf.add_n([tf.reduce_sum(o) for o in outs])
        grads = tf.gradients(loss, list(args))
        return outs + [dense_grad(g, a) for g, a in zip(grads, args)]

    return run


def with_tape(fn):
    def run(*args):
        with tf.GradientTape() as tape:
            for a in args:
                tape.watch(a)
            outs = fn(*args)
            loss = tf.add_n([tf.reduce_sum(o) for o in outs])
        grads = tape.gradient(loss, list(args))
        return outs + [dense_grad(g, a) for g, a in zip(grads, args)]

    return run


# ---- Writers ----------------------------------------------------------------------------


def write_fixture(out_dir, name, graph_def, feeds, fetches, results, tol, meta):
    d = os.path.join(out_dir, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    # The library's order and the maps' order vary from run to run; sorted, a regenerated
    # fixture differs only where the model did.
    functions = sorted(graph_def.library.function, key=lambda fn: fn.signature.name)
    del graph_def.library.function[:]
    graph_def.library.function.extend(functions)
    with open(os.path.join(d, "model.pb"), "wb") as f:
        f.write(graph_def.SerializeToString(deterministic=True))
    manifest = {
        "name": name,
        "graph": "model.pb",
        "tensorflow": tf.__version__,
        "tolerance": {"rtol": tol[0], "atol": tol[1]},
        "feeds": [],
        "fetches": [],
    }
    manifest.update(meta)
    for i, (fname, value) in enumerate(feeds):
        fn = "in_%d.npy" % i
        np.save(os.path.join(d, fn), value)
        manifest["feeds"].append({"name": fname, "file": fn, "dtype": str(value.dtype),
                                  "shape": list(value.shape)})
    for i, (fname, value) in enumerate(zip(fetches, results)):
        value = np.asarray(value)
        fn = "out_%d.npy" % i
        np.save(os.path.join(d, fn), value)
        manifest["fetches"].append({"name": fname, "file": fn, "dtype": str(value.dtype),
                                    "shape": list(value.shape)})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


def feed_shape(shapes, name, value):
    return shapes.get(name, value.shape)


def build_v1(fn, inputs, shapes=None):
    """A compat.v1 graph with v1 control flow; returns (GraphDef, feed names, fetch names,
    results)."""
    tf.compat.v1.disable_control_flow_v2()
    try:
        g = tf.Graph()
        with g.as_default():
            phs = [tf.compat.v1.placeholder(tf.float32, feed_shape(shapes or {}, n, v), name=n)
                   for n, v in inputs]
            outs = fn(*phs)
            outs = [tf.identity(o, name="out_%d" % i) for i, o in enumerate(outs)]
            with tf.compat.v1.Session(graph=g) as sess:
                results = sess.run(outs, {p: v for p, (_, v) in zip(phs, inputs)})
        gd = g.as_graph_def(add_shapes=True)
        return gd, [n for n, _ in inputs], [o.name for o in outs], results
    finally:
        tf.compat.v1.enable_control_flow_v2()


def build_v2(fn, inputs, shapes=None, lower=False):
    """A frozen tf.function with functional control flow (lower: frozen with
    lower_control_flow=True, TensorFlow's default, which lowers it to v1 control flow)."""
    specs = [tf.TensorSpec(feed_shape(shapes or {}, n, v), tf.float32, name=n)
             for n, v in inputs]
    concrete = tf.function(fn, input_signature=specs, autograph=False).get_concrete_function()
    frozen = convert_to_constants.convert_variables_to_constants_v2(
        concrete, lower_control_flow=lower)
    gd = frozen.graph.as_graph_def(add_shapes=True)
    if lower:
        # The lowering leaves a Placeholder `unused_control_flow_input` per lowered op that
        # nothing reads; without them the whole graph imports with the model's own feeds.
        read = {i.lstrip("^").split(":")[0] for n in gd.node for i in n.input}
        keep = [n for n in gd.node if not (n.op == "Placeholder" and n.name not in read and
                                           n.name.startswith("unused_control_flow_input"))]
        del gd.node[:]
        gd.node.extend(keep)
    feeds = [t.name.split(":")[0] for t in frozen.inputs]
    fetches = [t.name for t in frozen.outputs]
    results = frozen(*[tf.constant(v) for _, v in inputs])
    if not isinstance(results, (list, tuple)):
        results = [results]
    return gd, feeds, fetches, [r.numpy() for r in results]


def op_histogram(gd):
    ops = {}
    for n in gd.node:
        ops[n.op] = ops.get(n.op, 0) + 1
    for f in gd.library.function:
        for n in f.node_def:
            ops[n.op] = ops.get(n.op, 0) + 1
    return ops


# Models also written with second-order gradients (`_grad2`: the outputs' sum y, then
# d(sum of dy/dx_i squared)/dx_i for each input), in these control-flow versions. TensorFlow
# refuses second-order gradients of v1 while_loops. eddy refuses the v2 second-order gradient
# of a cond in a cond with a loop (cond_in_cond: an Optional whose type depends on the branch,
# wrapped in another Optional); docs/import.md, Gaps. nested and cond_in_while push onto lists
# of lists (the inner loop's accumulators, per outer iteration).
SECOND_ORDER = {"cond_in_cond": ("v1", "v2"), "cond": ("v1", "v2"), "count": ("v2",), "map_fn": ("v2",),
                "scan": ("v2",), "cond_with_loop": ("v2",), "nested": ("v2",),
                "cond_in_while": ("v2",)}


def second_order(fn, v2):
    def run(*args):
        args = list(args)
        if v2:
            with tf.GradientTape() as t2:
                t2.watch(args)
                with tf.GradientTape() as t1:
                    t1.watch(args)
                    y = tf.add_n([tf.reduce_sum(o) for o in fn(*args)])
                gs = t1.gradient(y, args)
                s = tf.add_n([tf.reduce_sum(g * g) for g in gs if g is not None])
            g2 = t2.gradient(s, args)
        else:
            y = tf.add_n([tf.reduce_sum(o) for o in fn(*args)])
            gs = tf.gradients(y, args)
            s = tf.add_n([tf.reduce_sum(g * g) for g in gs if g is not None])
            g2 = tf.gradients(s, args)
        return [y] + [g if g is not None else tf.zeros_like(a) for g, a in zip(g2, args)]

    return run


# Models also written as `_lowered`: the v2 form (and its GradientTape gradient) frozen with
# lower_control_flow=True, TensorFlow's default, which lowers the While to v1 frames in the
# graph, the cond_v2 Case in it to _SwitchN and Merge, and keeps the gradient's Optionals on a
# list carried through the v1 frames.
LOWERED = {"switch_case", "loop_pred_cond", "decode_break", "scan"}


def write_models(out_dir, only):
    os.makedirs(out_dir, exist_ok=True)
    all_ops = {}
    for model, (fn, inputs, tol) in MODELS.items():
        for grad in (0, 1, 2):
            if grad == 1 and model in FORWARD_ONLY:
                continue
            shapes = FEED_SHAPES.get(model, {})
            for cf in ("v1", "v2", "lowered"):
                if grad == 2 and cf not in SECOND_ORDER.get(model, ()):
                    continue
                if cf == "lowered" and (grad == 2 or model not in LOWERED):
                    continue
                name = "%s%s_%s" % (model, ("", "_grad", "_grad2")[grad], cf)
                if only and name not in only:
                    continue
                if model in ONLY_FORMS and name[len(model) + 1:] not in ONLY_FORMS[model]:
                    continue
                if grad == 2:
                    f = second_order(fn, cf == "v2")
                elif cf == "v1":
                    f = with_grads(fn) if grad else fn
                else:
                    f = with_tape(fn) if grad else fn
                if cf == "v1":
                    gd, feeds, fetches, results = build_v1(f, inputs, shapes)
                else:
                    gd, feeds, fetches, results = build_v2(f, inputs, shapes,
                                                           lower=cf == "lowered")
                t = GRAD_TOL if grad else (tol or DEFAULT_TOL)
                meta = {"model": model, "control_flow": cf, "gradient": grad > 0,
                        "description": (fn.__doc__ or "").strip()}
                write_fixture(out_dir, name, gd, list(zip(feeds, [v for _, v in inputs])),
                              fetches, results, t, meta)
                ops = op_histogram(gd)
                for k, v in ops.items():
                    all_ops[k] = all_ops.get(k, 0) + v
                print("%-22s %6d bytes, %3d nodes, %2d functions" % (
                    name, gd.ByteSize(), len(gd.node), len(gd.library.function)))
    return all_ops


# ---- Malformed inputs -------------------------------------------------------------------
# Each bad case is a file and the message `eddy import` must print; tests/lit/tf/bad-*.test
# check them.


def bad_cases():
    from tensorflow.core.framework import graph_pb2, node_def_pb2, function_pb2  # noqa
    from tensorflow.core.framework import attr_value_pb2, tensor_pb2, types_pb2  # noqa
    from tensorflow.core.framework import tensor_shape_pb2  # noqa
    cases = {}

    def node(name, op, inputs=(), **attrs):
        n = node_def_pb2.NodeDef(name=name, op=op, input=list(inputs))
        for k, v in attrs.items():
            n.attr[k].CopyFrom(v)
        return n

    def a_type(t):
        return attr_value_pb2.AttrValue(type=t)

    def a_shape(dims):
        return attr_value_pb2.AttrValue(shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in dims]))

    def a_tensor(t):
        return attr_value_pb2.AttrValue(tensor=t)

    def a_func(name):
        return attr_value_pb2.AttrValue(func=attr_value_pb2.NameAttrList(name=name))

    def const(name, values, dims, dtype=types_pb2.DT_FLOAT):
        t = tensor_pb2.TensorProto(dtype=dtype, tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in dims]))
        t.float_val.extend(values)
        return node(name, "Const", dtype=a_type(dtype), value=a_tensor(t))

    def graph(*nodes, library=None):
        g = graph_pb2.GraphDef(node=list(nodes))
        g.versions.producer = 1000
        if library is not None:
            g.library.CopyFrom(library)
        return g.SerializeToString()

    x = node("x", "Placeholder", dtype=a_type(types_pb2.DT_FLOAT), shape=a_shape([3]))
    good = graph(x, node("y", "Tanh", ["x"], T=a_type(types_pb2.DT_FLOAT)))

    cases["truncated.pb"] = good[: len(good) - 7]
    cases["garbage.pb"] = bytes(range(256)) * 2
    cases["empty.pb"] = b""
    # A SavedModel-like message: field 1 is a varint, not GraphDef's repeated NodeDef.
    cases["wrong-message.pb"] = b"\x08\x01\x12\x04\x0a\x02\x08\x01"
    cases["unknown-ops.pb"] = graph(
        x, node("a", "FancyOp", ["x"]), node("b", "OtherOp", ["a"]),
        node("c", "FancyOp", ["b"]), node("d", "Tanh", ["c"], T=a_type(types_pb2.DT_FLOAT)))
    cases["missing-input.pb"] = graph(
        x, node("y", "AddV2", ["x", "nowhere:0"], T=a_type(types_pb2.DT_FLOAT)))
    cases["bad-output-index.pb"] = graph(
        x, node("y", "Tanh", ["x:3"], T=a_type(types_pb2.DT_FLOAT)))
    cases["const-payload.pb"] = graph(const("c", [1.0, 2.0, 3.0, 4.0, 5.0], [2, 2]))
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=3)]), tensor_content=b"\0" * 10)
    cases["const-content.pb"] = graph(node("c", "Const", dtype=a_type(types_pb2.DT_FLOAT),
                                           value=a_tensor(t)))
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_INT32, tensor_shape=tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=2)]))
    t.int_val.extend([1, 2])
    cases["const-dtype.pb"] = graph(node("c", "Const", dtype=a_type(types_pb2.DT_FLOAT),
                                         value=a_tensor(t)))
    cases["negative-dim.pb"] = graph(const("c", [1.0], [2, -3]))
    cases["overflow-dim.pb"] = graph(const("c", [1.0], [1 << 40, 1 << 40]))
    cases["placeholder-dim.pb"] = graph(
        node("x", "Placeholder", dtype=a_type(types_pb2.DT_FLOAT), shape=a_shape([4, -7])))
    cases["duplicate-node.pb"] = graph(
        x, node("y", "Tanh", ["x"], T=a_type(types_pb2.DT_FLOAT)),
        node("y", "Sigmoid", ["x"], T=a_type(types_pb2.DT_FLOAT)))
    cases["cycle.pb"] = graph(
        x, node("a", "AddV2", ["x", "c"], T=a_type(types_pb2.DT_FLOAT)),
        node("b", "Tanh", ["a"], T=a_type(types_pb2.DT_FLOAT)),
        node("c", "Tanh", ["b"], T=a_type(types_pb2.DT_FLOAT)))

    def fdef(name, callee):
        f = function_pb2.FunctionDef()
        f.signature.name = name
        a = f.signature.input_arg.add()
        a.name, a.type = "v", types_pb2.DT_FLOAT
        o = f.signature.output_arg.add()
        o.name, o.type = "out", types_pb2.DT_FLOAT
        f.node_def.extend([node("call", "PartitionedCall", ["v"],
                                Tin=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
                                    type=[types_pb2.DT_FLOAT])),
                                Tout=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
                                    type=[types_pb2.DT_FLOAT])),
                                f=a_func(callee))])
        f.ret["out"] = "call:output:0"
        return f

    def call(name, callee):
        return node(name, "PartitionedCall", ["x"],
                    Tin=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
                        type=[types_pb2.DT_FLOAT])),
                    Tout=attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(
                        type=[types_pb2.DT_FLOAT])),
                    f=a_func(callee))

    lib = function_pb2.FunctionDefLibrary(function=[fdef("selfish", "selfish")])
    cases["recursive-function.pb"] = graph(x, call("y", "selfish"), library=lib)
    lib = function_pb2.FunctionDefLibrary(function=[fdef("ping", "pong"), fdef("pong", "ping")])
    cases["function-cycle.pb"] = graph(x, call("y", "ping"), library=lib)
    cases["unknown-function.pb"] = graph(x, call("y", "nothere"))
    cases["control-input-missing.pb"] = graph(
        x, node("y", "Tanh", ["x", "^nowhere"], T=a_type(types_pb2.DT_FLOAT)))
    cases["string-feed.pb"] = graph(
        node("s", "Placeholder", dtype=a_type(types_pb2.DT_STRING)))
    cases["merge-no-entry.pb"] = graph(
        node("m", "Merge", ["n"], T=a_type(types_pb2.DT_FLOAT),
             N=attr_value_pb2.AttrValue(i=1)),
        node("n", "NextIteration", ["m"], T=a_type(types_pb2.DT_FLOAT)))
    f = fdef("badref", "unused")
    del f.node_def[:]
    f.node_def.extend([node("t", "Tanh", ["v"], T=a_type(types_pb2.DT_FLOAT))])
    f.ret["out"] = "t:nosuch:0"
    cases["function-bad-output.pb"] = graph(
        x, call("y", "badref"), library=function_pb2.FunctionDefLibrary(function=[f]))

    # Attribute values nested 200 deep (a func attr holding a func attr...): protobuf-c
    # would recurse once per level, so the importer must refuse before it parses.
    def varint(v):
        out = b""
        while True:
            b, v = v & 0x7F, v >> 7
            out += bytes([b | (0x80 if v else 0)])
            if not v:
                return out

    def field(num, payload):  # a length-delimited field
        return varint((num << 3) | 2) + varint(len(payload)) + payload

    value = b""
    for _ in range(200):
        name_attr_list = field(1, b"f") + field(2, field(1, b"a") + field(2, value))
        value = field(10, name_attr_list)  # AttrValue.func
    deep = field(1, b"n") + field(2, b"NoOp") + field(5, field(1, b"a") + field(2, value))
    cases["deep-nesting.pb"] = field(1, deep)
    return cases


def write_bad(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, data in sorted(bad_cases().items()):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        print("%-24s %6d bytes" % (name, len(data)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "tf"))
    ap.add_argument("--bad-out", default=os.path.join(ROOT, "tests", "fixtures", "tf-bad"))
    ap.add_argument("--only", action="append", default=[],
                    help="write only this fixture (e.g. count_v1); repeatable")
    ap.add_argument("--ops", action="store_true", help="print the ops the fixtures use")
    args = ap.parse_args()
    ops = write_models(args.out, set(args.only))
    if not args.only:
        write_bad(args.bad_out)
    if args.ops:
        for k in sorted(ops):
            print("  %-32s %d" % (k, ops[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
