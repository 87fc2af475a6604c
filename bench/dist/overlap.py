"""Iterations overlapping across ranks: one tf.while_loop (v1 control flow)
whose body holds two layers, layer 2 reading layer 1's output of the same
step, so that with layer 1 on rank 0 and layer 2 on rank 1 the ranks work on
neighbouring steps at once (the pipelining the distributed while loop of the
control-flow design allows). Writes model.pb, x.npy and places.txt to DIR.

    python3 bench/dist/overlap.py DIR [--steps N] [--hidden H] [--batch B]

Needs TensorFlow (only to write the GraphDef); bench/dist/run.sh runs it."""
import argparse
import os

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    import tensorflow as tf
    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.disable_control_flow_v2()
    rng = np.random.default_rng(3)
    h, b = a.hidden, a.batch
    w1 = (rng.standard_normal((h, h)) / np.sqrt(h)).astype(np.float32)
    w2 = (rng.standard_normal((h, h)) / np.sqrt(h)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [b, h], name="x")

        def body(t, s1, s2):
            with tf.name_scope("layer1"):
                n1 = tf.tanh(tf.matmul(s1, tf.constant(w1)))
            with tf.name_scope("layer2"):
                n2 = tf.tanh(tf.matmul(s2 + n1, tf.constant(w2)))
            return t + 1, n1, n2

        _, o1, o2 = tf.compat.v1.while_loop(lambda t, s1, s2: t < a.steps, body,
                                            [tf.constant(0), x, tf.zeros_like(x)])
        tf.identity(o2, name="out")
    os.makedirs(a.dir, exist_ok=True)
    with open(os.path.join(a.dir, "model.pb"), "wb") as f:
        f.write(g.as_graph_def().SerializeToString())
    np.save(os.path.join(a.dir, "x.npy"), rng.standard_normal((b, h)).astype(np.float32))
    with open(os.path.join(a.dir, "places.txt"), "w") as f:
        f.write("*layer2/* 1\n* 0\n")


if __name__ == "__main__":
    main()
