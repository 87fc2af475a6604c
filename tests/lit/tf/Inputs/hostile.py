"""Writes a hostile GraphDef (binary protobuf, encoded by hand with
long_chain.py's encoders): each must be refused with an error naming the
node, or stopped by a limit, in every mode; tests/lit/tf/hostile.test runs
them. Usage: hostile.py CASE [N] > FILE.pb

exit-no-enter      an Exit outside every loop frame
next-no-merge      a NextIteration that feeds no Merge
merge-two-live     a Merge of two Placeholders: both inputs always live
enters N           N Enters, each of a new frame inside the one before, and
                   nothing else of a loop (no Merge, no LoopCond)
unknown-dtype N    a Placeholder of DataType N (999: no such dtype;
                   8: complex64)
string-add         a string Const added to a float
attr-wrong-type    a Tanh whose T is an int, not a type
shape-overflow     a Placeholder of shape [2^40, 2^40]: the element count
                   overflows int64
forever            while (p) x += x0 as v1 control flow: it never ends when
                   p is true"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from long_chain import (DT_BOOL, DT_FLOAT, attr, field, frame_attrs,  # noqa: E402
                        node, text, type_attr, varint)

DT_STRING = 7


def merge_attrs(n=2):
    return type_attr("T") + attr("N", varint(3 << 3) + varint(n))


def placeholder(name, dtype=DT_FLOAT, dims=()):
    shape = b"".join(field(2, varint(1 << 3) + varint(d)) for d in dims)
    return node(name, "Placeholder", (), type_attr("dtype", dtype) + attr("shape", field(7, shape)))


def case(kind, n):
    x = placeholder("x")
    if kind == "exit-no-enter":
        return [x, node("lost", "Exit", ("x",), type_attr("T"))]
    if kind == "next-no-merge":
        return [x, node("n", "NextIteration", ("x",), type_attr("T")),
                node("y", "Identity", ("n",), type_attr("T"))]
    if kind == "merge-two-live":
        return [x, placeholder("z"), node("m", "Merge", ("x", "z"), merge_attrs())]
    if kind == "enters":
        g, v = [x], "x"
        for i in range(n):
            g.append(node("e%d" % i, "Enter", (v,), frame_attrs("f%d" % i, DT_FLOAT)))
            v = "e%d" % i
        return g
    if kind == "unknown-dtype":
        return [x, placeholder("u", n), node("y", "AddV2", ("x", "u"), type_attr("T"))]
    if kind == "string-add":
        # TensorProto: dtype (1), tensor_shape (2, empty: a scalar), string_val (8).
        value = varint(1 << 3) + varint(DT_STRING) + field(2, b"") + text(8, "seven")
        s = node("s", "Const", (), type_attr("dtype", DT_STRING) + attr("value", field(8, value)))
        return [x, s, node("y", "AddV2", ("x", "s"), type_attr("T"))]
    if kind == "attr-wrong-type":
        return [x, node("y", "Tanh", ("x",), attr("T", varint(3 << 3) + varint(1)))]
    if kind == "shape-overflow":
        return [placeholder("big", DT_FLOAT, (1 << 40, 1 << 40)),
                node("y", "Tanh", ("big",), type_attr("T"))]
    if kind == "forever":
        return [x, placeholder("p", DT_BOOL),
                node("e", "Enter", ("x",), frame_attrs("w", DT_FLOAT)),
                node("xe", "Enter", ("x",), frame_attrs("w", DT_FLOAT, True)),
                node("pe", "Enter", ("p",), frame_attrs("w", DT_BOOL, True)),
                node("m", "Merge", ("e", "n"), merge_attrs()),
                node("lc", "LoopCond", ("pe",)),
                node("s", "Switch", ("m", "lc"), type_attr("T")),
                node("b", "Identity", ("s:1",), type_attr("T")),
                node("a", "AddV2", ("b", "xe"), type_attr("T")),
                node("n", "NextIteration", ("a",), type_attr("T")),
                node("out", "Exit", ("s",), type_attr("T"))]
    raise SystemExit("hostile.py: unknown case '%s'" % kind)


def main():
    kind = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    sys.stdout.buffer.write(b"".join(case(kind, n)))


if __name__ == "__main__":
    main()
