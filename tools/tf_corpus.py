#!/usr/bin/env python3
"""Writes the model corpus of tests/fixtures/tf/: programs built the way a user builds them,
from Keras' own layers and TensorFlow's library functions, frozen, with TensorFlow's outputs.

Where tools/tf_fixtures.py writes one small program per control-flow pattern, this corpus holds
whole models: Keras LSTM, GRU and SimpleRNN layers (sequences and states), a Bidirectional
LSTM, stacked layers, a masked LSTM, an attention decoder step, a greedy decoder and a small
beam search whose trip counts depend on the data, a tf.scan model, a Kalman filter whose scan
solves with tf.linalg (inv, cholesky, triangular_solve, solve), one SGD step of an LSTM
regressor with its gradients, a Conv1D text classifier, a MobileNet-style image model
(depthwise and separable convolutions, resizing) and one SGD step of a dilated temporal
convolution classifier. Each is written as <model>_v2 (a frozen tf.function) and, where
TensorFlow can build it, <model>_v1 (a compat.v1 graph with v1 control flow, its variables
frozen into constants); the fixtures' layout is tools/tf_fixtures.py's.

Needs `pip install tensorflow-cpu numpy` (Keras 3 comes with TensorFlow); neither the build
nor the tests need it.

usage: tools/tf_corpus.py [--out DIR] [--only NAME]...
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tf_fixtures as tff  # noqa: E402

T, B, D, H, V = 5, 2, 4, 3, 7
ROWS_B = 16  # keras_rnn_rows: a batch eddy's row-split divides

# Whole models chain many ops: results match within these (relative, absolute) tolerances.
TOL = (1e-4, 1e-5)


def rnd(seed, shape, scale=1.0):
    return tff.rnd(seed, shape, scale)


# ---- Models -----------------------------------------------------------------------------
# Each maker returns a fresh function of float32 tensors (the layers' weights are created with
# a fixed seed, so every call builds the same model).


def layer_model(doc, make_layer, seed, batch=B):
    """A Keras layer applied to the input, its weights constants of the graph (through
    stateless_call, so that gradients of the frozen graph do not read variables)."""

    def make():
        keras.utils.set_random_seed(seed)
        layer = make_layer()
        layer.build((batch, T, D))
        ws = [v.numpy() for v in layer.trainable_variables]
        fixed = [v.numpy() for v in layer.non_trainable_variables]

        def fn(x):
            out, _ = layer.stateless_call([tf.constant(w) for w in ws],
                                          [tf.constant(w) for w in fixed], x)
            return list(out) if isinstance(out, (list, tuple)) else [out]

        return fn

    make.__doc__ = doc
    return make


def m_masked_lstm():
    """A Masking layer in front of an LSTM: masked steps keep the previous state."""
    keras.utils.set_random_seed(6)
    mask = keras.layers.Masking(0.0)
    lstm = keras.layers.LSTM(H, return_sequences=True, return_state=True)

    def fn(x):
        return list(lstm(mask(x)))

    return fn


def m_attention_step():
    """One step of an attention decoder: dot-product attention over the encoder states, an
    LSTM cell on [query, context], log-probabilities over the vocabulary."""
    keras.utils.set_random_seed(7)
    att = keras.layers.Attention()
    cell = keras.layers.LSTMCell(D)
    dense = keras.layers.Dense(V)

    def fn(q, enc, h, c):
        ctx = att([q, enc])
        inp = tf.concat([q[:, 0, :], ctx[:, 0, :]], axis=-1)
        out, (h2, c2) = cell(inp, [h, c])
        return [tf.nn.log_softmax(dense(out)), h2, c2]

    return fn


def m_greedy_decoder():
    """Greedy decoding with a GRU cell until every sequence has emitted token 0 (at most 12
    steps): a trip count that depends on the data, tokens in a dynamic-size TensorArray."""
    keras.utils.set_random_seed(8)
    emb = keras.layers.Embedding(V, D)
    cell = keras.layers.GRUCell(D)
    dense = keras.layers.Dense(V)

    def fn(h0):
        b = tf.shape(h0)[0]
        tok0 = tf.fill([b], 1)
        done0 = tf.zeros([b], tf.bool)
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)

        def cond(t, tok, h, done, ta):
            return tf.logical_and(t < 12, tf.logical_not(tf.reduce_all(done)))

        def body(t, tok, h, done, ta):
            o, hs = cell(emb(tok), [h])
            nxt = tf.argmax(dense(o), axis=-1, output_type=tf.int32)
            nxt = tf.where(done, tf.zeros_like(nxt), nxt)
            return (t + 1, nxt, hs[0], tf.logical_or(done, tf.equal(nxt, 0)),
                    ta.write(t, nxt))

        t, _, h, _, ta = tf.while_loop(cond, body, [0, tok0, h0, done0, ta])
        return [tf.cast(ta.stack(), tf.float32), h, tf.cast(t, tf.float32)]

    return fn


def m_beam_search():
    """Four steps of a beam search of width 3: top-k over beam x vocabulary, the surviving
    beams' states gathered with GatherNd."""
    keras.utils.set_random_seed(9)
    emb = keras.layers.Embedding(V, D)
    dense = keras.layers.Dense(V)
    k = 3

    def fn(h0):
        h = tf.tile(h0, [k, 1])
        scores0 = tf.constant([0.0] + [-1e9] * (k - 1))
        tok0 = tf.ones([k], tf.int32)

        def body(t, tok, scores, h):
            h2 = tf.tanh(h + emb(tok))
            lp = tf.nn.log_softmax(dense(h2))
            top, idx = tf.math.top_k(tf.reshape(scores[:, None] + lp, [-1]), k)
            h3 = tf.gather_nd(h2, (idx // V)[:, None])
            return t + 1, idx % V, top, h3

        _, tok, scores, h = tf.while_loop(lambda t, *_: t < 4, body, [0, tok0, scores0, h])
        return [tf.cast(tok, tf.float32), scores, h]

    return fn


def m_scan_cumulative():
    """A tf.scan recurrence acc' = tanh(acc * w + x_t)."""

    def fn(x, w):
        return [tf.scan(lambda acc, xt: tf.tanh(acc * w + xt), x,
                        initializer=tf.zeros_like(x[0]))]

    return fn


def m_kalman_2d():
    """A Kalman filter of a constant-velocity target in the plane (state: position and
    velocity, 4) observed in 2-D, by tf.scan over the observations with a (mean, covariance,
    log-likelihood) state: the gain through tf.linalg.inv of the innovation covariance S, the
    Gaussian log-likelihood of each innovation through tf.linalg.cholesky of S and
    tf.linalg.triangular_solve (whitening), the Joseph-form covariance update; then the
    information vector of the last estimate, tf.linalg.solve(P, m). The process and
    observation noise scales are inputs (log q, log r), so the gradient variant holds the
    log-likelihood's gradient with respect to them and to the observations."""
    dt = 0.5
    f = np.array([[1, 0, dt, 0], [0, 1, 0, dt], [0, 0, 1, 0], [0, 0, 0, 1]], np.float32)
    h = np.array([[1, 0, 0, 0], [0, 1, 0, 0]], np.float32)
    q0 = np.array([[dt ** 3 / 3, 0, dt ** 2 / 2, 0], [0, dt ** 3 / 3, 0, dt ** 2 / 2],
                   [dt ** 2 / 2, 0, dt, 0], [0, dt ** 2 / 2, 0, dt]], np.float32)

    def fn(ys, log_q, log_r):
        fm, hm = tf.constant(f), tf.constant(h)
        q = tf.exp(log_q) * tf.constant(q0)
        r = tf.exp(log_r) * tf.eye(2)

        def step(carry, y):
            m, p, ll = carry
            m_p = tf.linalg.matvec(fm, m)
            p_p = tf.matmul(tf.matmul(fm, p), fm, transpose_b=True) + q
            s = tf.matmul(tf.matmul(hm, p_p), hm, transpose_b=True) + r
            k = tf.matmul(tf.matmul(p_p, hm, transpose_b=True), tf.linalg.inv(s))
            e = y - tf.linalg.matvec(hm, m_p)
            chol = tf.linalg.cholesky(s)
            z = tf.linalg.triangular_solve(chol, e[:, None], lower=True)
            ll_t = (-0.5 * tf.reduce_sum(z * z)
                    - tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)))
                    - np.float32(np.log(2.0 * np.pi)))
            a = tf.eye(4) - tf.matmul(k, hm)
            p_u = (tf.matmul(tf.matmul(a, p_p), a, transpose_b=True)
                   + tf.matmul(tf.matmul(k, r), k, transpose_b=True))
            return m_p + tf.linalg.matvec(k, e), p_u, ll + ll_t

        ms, ps, lls = tf.scan(step, ys, initializer=(tf.zeros([4]), tf.eye(4), tf.constant(0.0)))
        info = tf.linalg.solve(ps[-1], ms[-1][:, None])
        return [ms, lls[-1], info]

    return fn


def kalman_inputs():
    t = np.arange(8, dtype=np.float32)[:, None]
    track = np.concatenate([1.0 + 0.6 * t, -0.5 + 0.3 * t], axis=1)
    return [("ys", track + rnd(50, [8, 2], 0.3)), ("log_q", np.array(-1.2, np.float32)),
            ("log_r", np.array(-2.0, np.float32))]


class TanhCell:
    """The smallest cell tf.compat.v1.nn's RNN functions take: h' = tanh([x, h] W)."""
    state_size = H
    output_size = H

    def __init__(self, w):
        self.w = w

    def __call__(self, x, h, scope=None):
        h2 = tf.tanh(tf.matmul(tf.concat([x, h], 1), tf.constant(self.w)))
        return h2, h2

    def zero_state(self, b, dtype):
        return tf.zeros([b, H], dtype)


def m_dynamic_rnn():
    """tf.compat.v1.nn.dynamic_rnn of a tanh cell over sequences of lengths 5 and 3 (fed as
    the floats 5.5 and 3.5 and truncated by a cast, away from the cast's steps so that finite
    differences see no jump): steps past a sequence's end output zeros and keep its state; an
    Assert checks the lengths' shape."""
    w = rnd(50, [D + H, H], 0.5)

    def fn(x, lens):
        out, st = tf.compat.v1.nn.dynamic_rnn(TanhCell(w), x,
                                              sequence_length=tf.cast(lens, tf.int32),
                                              dtype=tf.float32)
        return [out, st]

    return fn


def m_bidi_dynamic_rnn():
    """tf.compat.v1.nn.bidirectional_dynamic_rnn of two tanh cells over sequences of lengths 5
    and 2 (fed as 5.5 and 2.5): the backward pass reverses each sequence within its length
    (ReverseSequence, which is also its own gradient)."""
    wf, wb = rnd(51, [D + H, H], 0.5), rnd(52, [D + H, H], 0.5)

    def fn(x, lens):
        (of, ob), (sf, sb) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
            TanhCell(wf), TanhCell(wb), x, sequence_length=tf.cast(lens, tf.int32),
            dtype=tf.float32)
        return [tf.concat([of, ob], -1), sf + sb]

    return fn


def m_mha_block():
    """A transformer encoder block: keras.layers.MultiHeadAttention (2 heads, a causal mask:
    MatrixBandPart), a residual, LayerNormalization and a Dense feed-forward layer."""
    keras.utils.set_random_seed(12)
    inp = keras.Input((T, D))
    a = keras.layers.MultiHeadAttention(2, 2)(inp, inp, use_causal_mask=True)
    h = keras.layers.LayerNormalization()(inp + a)
    model = keras.Model(inp, keras.layers.Dense(D, activation="relu")(h))
    ws = [v.numpy() for v in model.trainable_variables]
    fixed = [v.numpy() for v in model.non_trainable_variables]

    def fn(x):
        y, _ = model.stateless_call([tf.constant(w) for w in ws],
                                    [tf.constant(w) for w in fixed], x)
        return [y]

    return fn


def conv_text_model():
    keras.utils.set_random_seed(13)
    return keras.Sequential([
        keras.Input((8,)), keras.layers.Embedding(V, D),
        keras.layers.Conv1D(5, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling1D(2), keras.layers.Conv1D(5, 2, activation="relu"),
        keras.layers.GlobalMaxPooling1D(), keras.layers.Dense(2)])


def m_keras_conv_text():
    """A Keras text classifier: Embedding, Conv1D (SAME, relu), MaxPooling1D, Conv1D (VALID,
    relu), GlobalMaxPooling1D and Dense over a dynamic batch of 8 tokens (fed as floats k + 0.5
    and truncated by a cast, away from the cast's steps), log-softmax. The weights are inputs
    (Keras' stateless_call), so the gradient variant holds Conv2DBackpropFilter, MaxPoolGrad
    and the embedding's gradient."""
    model = conv_text_model()

    def fn(x, *ws):
        y, _ = model.stateless_call(list(ws), [], tf.cast(x, tf.int32))
        return [tf.nn.log_softmax(y)]

    return fn


def conv_text_inputs():
    # Weights of unit scale, not Keras' small initial ones: the relus' and max pools' kinks
    # then lie far from the values, beyond the steps of finite differences.
    ws = [rnd(61 + i, v.shape, 0.7) for i, v in enumerate(conv_text_model().trainable_variables)]
    toks = np.random.RandomState(60).randint(0, V, (B, 8)).astype(np.float32) + 0.5
    return [("x", toks)] + [("w%d" % i, w) for i, w in enumerate(ws)]


def mobile_conv_model():
    keras.utils.set_random_seed(14)
    return keras.Sequential([
        keras.Input((5, 5, 2)), keras.layers.Resizing(6, 6),
        keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2,
                                     activation="swish"),
        keras.layers.SeparableConv2D(3, 3, strides=2, padding="same", activation="tanh"),
        keras.layers.Resizing(4, 4, interpolation="nearest"),
        keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(2)])


def m_keras_mobile_conv():
    """A MobileNet-style image model: Resizing (bilinear, half-pixel
    centers: ResizeBilinear), DepthwiseConv2D (depth multiplier 2, SAME, swish),
    SeparableConv2D (stride 2: a DepthwiseConv2dNative, then a 1x1 Conv2D), Resizing
    (nearest: ResizeNearestNeighbor), GlobalAveragePooling2D and Dense. The weights are
    inputs (stateless_call), so the gradient variant holds DepthwiseConv2dNativeBackpropInput
    and BackpropFilter, ResizeBilinearGrad and ResizeNearestNeighborGrad."""
    model = mobile_conv_model()

    def fn(x, *ws):
        y, _ = model.stateless_call(list(ws), [], x)
        return [y]

    return fn


def mobile_conv_inputs():
    ws = [rnd(71 + i, v.shape, 0.7) for i, v in enumerate(mobile_conv_model().trainable_variables)]
    return [("x", rnd(70, [B, 5, 5, 2]))] + [("w%d" % i, w) for i, w in enumerate(ws)]


def tcn_model():
    keras.utils.set_random_seed(15)
    return keras.Sequential([
        keras.Input((8, 2)),
        keras.layers.Conv1D(3, 2, padding="causal", activation="tanh"),
        keras.layers.Conv1D(3, 2, padding="causal", dilation_rate=2, activation="tanh"),
        keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(3)])


def m_tcn_train_step():
    """One SGD step of a temporal convolution classifier: causal Conv1D,
    causal Conv1D with dilation 2 (SpaceToBatchND / BatchToSpaceND), GlobalAveragePooling1D,
    Dense; a sparse cross entropy (labels fed as floats k + 0.5, truncated by a cast) and an
    L2 penalty (tf.nn.l2_loss: L2Loss); the gradients clipped by tf.clip_by_global_norm
    (L2Loss again), every weight updated."""
    model = tcn_model()

    def fn(x, y, *ws):
        ws = list(ws)
        with tf.GradientTape() as tape:
            tape.watch(ws)
            p, _ = model.stateless_call(ws, [], x)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                tf.cast(y, tf.int32), p))
            loss += 1e-2 * tf.add_n([tf.nn.l2_loss(w) for w in ws])
        gs, norm = tf.clip_by_global_norm(tape.gradient(loss, ws), 1.0)
        return [loss, norm] + [w - 0.1 * g for w, g in zip(ws, gs)]

    return fn


def tcn_inputs():
    ws = [rnd(81 + i, v.shape, 0.7) for i, v in enumerate(tcn_model().trainable_variables)]
    return ([("x", rnd(80, [3, 8, 2])), ("y", np.array([0.5, 2.5, 1.5], np.float32))]
            + [("w%d" % i, w) for i, w in enumerate(ws)])


def train_step_weights():
    keras.utils.set_random_seed(10)
    model = keras.Sequential([keras.Input((T, D)), keras.layers.LSTM(H), keras.layers.Dense(1)])
    return model


def m_lstm_train_step():
    """One SGD step (rate 0.1) of an LSTM + Dense regressor on a mean squared error: the loss,
    then every weight updated. The weights are inputs (Keras' stateless_call), so the graph
    holds the forward pass, the loss, the gradients through the loop and the update."""
    model = train_step_weights()
    fixed_np = [v.numpy() for v in model.non_trainable_variables]

    def fn(x, y, *ws):
        ws = list(ws)
        fixed = [tf.constant(w) for w in fixed_np]
        with tf.GradientTape() as tape:
            tape.watch(ws)
            p, _ = model.stateless_call(ws, fixed, x)
            loss = tf.reduce_mean(tf.square(p - y))
        gs = tape.gradient(loss, ws)
        return [loss] + [w - 0.1 * g for w, g in zip(ws, gs)]

    return fn


def train_step_inputs():
    ws = [v.numpy() for v in train_step_weights().trainable_variables]
    return ([("x", rnd(40, [B, T, D])), ("y", rnd(41, [B, 1]))]
            + [("w%d" % i, w) for i, w in enumerate(ws)])


def masked_input():
    x = rnd(33, [B, T, D])
    x[0, 3:] = 0.0
    x[1, 1:3] = 0.0
    return x


# name -> (maker, inputs, control-flow forms, with a gradient variant)
MODELS = {
    "keras_lstm": (layer_model("keras.layers.LSTM, all h and the final h and c.", lambda: keras.layers.LSTM(
        H, return_sequences=True, return_state=True), 1),
        lambda: [("x", rnd(30, [B, T, D]))], ("v1", "v2"), True),
    "keras_gru": (layer_model("keras.layers.GRU, all h and the final h.", lambda: keras.layers.GRU(
        H, return_sequences=True, return_state=True), 2),
        lambda: [("x", rnd(31, [B, T, D]))], ("v1", "v2"), True),
    "keras_simple_rnn": (layer_model("keras.layers.SimpleRNN, all h.", lambda: keras.layers.SimpleRNN(
        H, return_sequences=True), 3),
        lambda: [("x", rnd(32, [B, T, D]))], ("v1", "v2"), False),
    "keras_rnn_rows": (layer_model(
        "keras.layers.SimpleRNN(8), all h, on a batch of 16: rows enough for eddy's row-split "
        "to run the loop as two loops of 8 rows each (its output TensorArray becomes two "
        "lists, stacked and joined).", lambda: keras.layers.SimpleRNN(8, return_sequences=True),
        12, ROWS_B), lambda: [("x", rnd(33, [ROWS_B, T, D]))], ("v2",), False),
    "keras_bilstm": (layer_model("A Bidirectional LSTM (the backward pass reverses the sequence).", lambda: keras.layers.Bidirectional(
        keras.layers.LSTM(H, return_sequences=True)), 4),
        lambda: [("x", rnd(34, [B, T, D]))], ("v1", "v2"), True),
    "keras_stacked": (layer_model("Stacked LSTM, GRU and Dense layers.", lambda: keras.Sequential([
        keras.layers.LSTM(H, return_sequences=True),
        keras.layers.GRU(H, return_sequences=True), keras.layers.Dense(2)]), 5),
        lambda: [("x", rnd(35, [B, T, D]))], ("v1", "v2"), False),
    "keras_masked_lstm": (m_masked_lstm, lambda: [("x", masked_input())], ("v1", "v2"), False),
    "attention_step": (m_attention_step,
                       lambda: [("q", rnd(36, [B, 1, D])), ("enc", rnd(37, [B, T, D])),
                                ("h", rnd(38, [B, D])), ("c", rnd(39, [B, D]))],
                       ("v1", "v2"), False),
    "greedy_decoder": (m_greedy_decoder, lambda: [("h0", rnd(42, [B, D]))], ("v1", "v2"),
                       False),
    "beam_search": (m_beam_search, lambda: [("h0", rnd(43, [1, D]))], ("v1", "v2"), False),
    "scan_cumulative": (m_scan_cumulative, lambda: [("x", rnd(44, [T, D])),
                                                    ("w", rnd(45, [D]))], ("v1", "v2"), False),
    "kalman_2d": (m_kalman_2d, kalman_inputs, ("v1", "v2"), True),
    "keras_gru_dyn": (layer_model("keras.layers.GRU(go_backwards=True) on a [None, None, 4] input "
                                  "(dynamic batch and time: its zero state is a Fill of a run-time "
                                  "shape).", lambda: keras.layers.GRU(
        H, go_backwards=True, return_sequences=True), 11),
        lambda: [("x", rnd(46, [B, T, D]))], ("v1", "v2"), True),
    "dynamic_rnn": (m_dynamic_rnn, lambda: [("x", rnd(47, [B, T, D])),
                                            ("lens", np.array([5.5, 3.5], np.float32))],
                    ("v1", "v2"), True),
    "bidi_dynamic_rnn": (m_bidi_dynamic_rnn, lambda: [("x", rnd(49, [B, T, D])),
                                                      ("lens", np.array([5.5, 2.5], np.float32))],
                         ("v1", "v2"), True),
    "mha_block": (m_mha_block, lambda: [("x", rnd(48, [B, T, D]))], ("v1", "v2"), False),
    "keras_conv_text": (m_keras_conv_text, conv_text_inputs, ("v1", "v2"), True),
    # TensorFlow's v1 TensorArray gradient of Keras' loop fails to run in TensorFlow itself.
    "lstm_train_step": (m_lstm_train_step, train_step_inputs, ("v2",), False),
    "keras_mobile_conv": (m_keras_mobile_conv, mobile_conv_inputs, ("v1", "v2"), True),
    # v2 only: the v1 graph holds the same ops. Static shapes: compiling the gradients of a
    # dynamic batch takes seconds (tests/lit/tf/legalize-space-batch-dynamic.eddy runs one).
    "tcn_train_step": (m_tcn_train_step, tcn_inputs, ("v2",), False),
}


# Feeds declared with dynamic dimensions (None), by model.
FEED_SHAPES = {"keras_gru_dyn": {"x": [None, None, D]}, "keras_conv_text": {"x": [None, 8]}}


def build_v1(fn, inputs, shapes=None):
    """Like tf_fixtures.build_v1, and the graph's variables are initialized, then frozen."""
    tf.compat.v1.disable_control_flow_v2()
    try:
        g = tf.Graph()
        with g.as_default():
            phs = [tf.compat.v1.placeholder(tf.float32, (shapes or {}).get(n, v.shape), name=n)
                   for n, v in inputs]
            outs = [tf.identity(o, name="out_%d" % i) for i, o in enumerate(fn(*phs))]
            with tf.compat.v1.Session(graph=g) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                results = sess.run(outs, {p: v for p, (_, v) in zip(phs, inputs)})
                gd = tf.compat.v1.graph_util.convert_variables_to_constants(
                    sess, g.as_graph_def(add_shapes=True), [o.op.name for o in outs])
        return gd, [n for n, _ in inputs], [o.name for o in outs], results
    finally:
        tf.compat.v1.enable_control_flow_v2()


def write_models(out_dir, only):
    os.makedirs(out_dir, exist_ok=True)
    for model, (make, inputs, forms, grad_too) in MODELS.items():
        values = inputs()
        for grad in (False, True) if grad_too else (False,):
            for cf in forms:
                name = "%s%s_%s" % (model, "_grad" if grad else "", cf)
                if only and name not in only:
                    continue
                fn = make()
                shapes = FEED_SHAPES.get(model)
                if cf == "v1":
                    gd, feeds, fetches, results = build_v1(
                        tff.with_grads(fn) if grad else fn, values, shapes)
                else:
                    gd, feeds, fetches, results = tff.build_v2(
                        tff.with_tape(fn) if grad else fn, values, shapes)
                meta = {"model": model, "control_flow": cf, "gradient": grad,
                        "description": (make.__doc__ or fn.__doc__ or "").strip()}
                tff.write_fixture(out_dir, name, gd, list(zip(feeds, [v for _, v in values])),
                                  fetches, results, TOL, meta)
                print("%-26s %6d bytes, %3d nodes, %2d functions" % (
                    name, gd.ByteSize(), len(gd.node), len(gd.library.function)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(tff.ROOT, "tests", "fixtures", "tf"))
    ap.add_argument("--only", action="append", default=[],
                    help="write only this fixture (e.g. keras_lstm_v2); repeatable")
    args = ap.parse_args()
    write_models(args.out, set(args.only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
