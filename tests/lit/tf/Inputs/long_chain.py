"""Writes a GraphDef (binary protobuf, encoded by hand) that is long or deep:
`data N`: Placeholder x -> N Identity nodes, each reading the one before;
`control N`: N NoOps, each with a control input on the one before, and an
Identity of x that waits on the last;
`loops N`: N v1 while loops nested in one another (Enter, Merge, LoopCond
on a loop-invariant Placeholder p, Switch, NextIteration, Exit), the
innermost body passing x through; fetch `x0`;
`conds N`: N v1 conds nested in the true branches (Switch on p, on
LogicalNot(p) one level in, ..., and Merge), passing x through; fetch `m0`.
Walks over such graphs must iterate, not recurse once per node (a stack of
8 MiB holds a few ten thousand frames), and must not cost a power of the
nesting depth. Usage: long_chain.py data|control|loops|conds N > FILE.pb"""
import sys

DT_FLOAT, DT_BOOL = 1, 10


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):  # a length-delimited field
    return varint((num << 3) | 2) + varint(len(payload)) + payload


def text(num, s):
    return field(num, s.encode())


def attr(name, value):  # NodeDef.attr map entry: key 1, AttrValue 2
    return field(5, text(1, name) + field(2, value))


def type_attr(name, dtype=DT_FLOAT):  # AttrValue.type (field 6, varint)
    return attr(name, varint(6 << 3) + varint(dtype))


def frame_attrs(frame, dtype, constant=False):  # Enter: T, frame_name (s, 2)
    attrs = type_attr("T", dtype) + attr("frame_name", text(2, frame))
    if constant:  # is_constant (b, field 5)
        attrs += attr("is_constant", varint(5 << 3) + varint(1))
    return attrs


def nested_loops(n):
    shape = attr("shape", field(7, b""))
    g = [node("p", "Placeholder", (), type_attr("dtype", DT_BOOL) + shape)]
    v, p = "x", "p"
    for i in range(n):
        f = "f%d" % i
        g += [
            node("e%d" % i, "Enter", (v,), frame_attrs(f, DT_FLOAT)),
            node("pe%d" % i, "Enter", (p,), frame_attrs(f, DT_BOOL, True)),
            node("m%d" % i, "Merge", ("e%d" % i, "n%d" % i),
                 type_attr("T") + attr("N", varint(3 << 3) + varint(2))),
            node("lc%d" % i, "LoopCond", ("pe%d" % i,)),
            node("s%d" % i, "Switch", ("m%d" % i, "lc%d" % i), type_attr("T")),
            node("b%d" % i, "Identity", ("s%d:1" % i,), type_attr("T")),
        ]
        v, p = "b%d" % i, "pe%d" % i
    for i in reversed(range(n)):  # close the loops from the inside out
        g.append(node("n%d" % i, "NextIteration", (v,), type_attr("T")))
        g.append(node("x%d" % i, "Exit", ("s%d" % i,), type_attr("T")))
        v = "x%d" % i
    return g


def node(name, op, inputs=(), attrs=b""):  # GraphDef.node, NodeDef 1 2 3
    body = text(1, name) + text(2, op)
    for i in inputs:
        body += text(3, i)
    return field(1, body + attrs)


def nested_conds(n):
    shape = attr("shape", field(7, b""))
    g = [node("p", "Placeholder", (), type_attr("dtype", DT_BOOL) + shape)]
    v, p = "x", "p"
    for i in range(n):
        g.append(node("s%d" % i, "Switch", (v, p), type_attr("T")))
        g.append(node("t%d" % i, "Identity", ("s%d:1" % i,), type_attr("T")))
        g.append(node("q%d" % i, "LogicalNot", (p,)))
        v, p = "t%d" % i, "q%d" % i
    for i in reversed(range(n)):  # the false output joins the inner result
        g.append(node("m%d" % i, "Merge", ("s%d" % i, v),
                      type_attr("T") + attr("N", varint(3 << 3) + varint(2))))
        v = "m%d" % i
    return g


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    # Placeholder x: dtype float, shape [] (AttrValue.shape 7, empty shape).
    g = [node("x", "Placeholder", (), type_attr("dtype") + attr("shape", field(7, b"")))]
    if kind == "loops":
        g += nested_loops(n)
    elif kind == "conds":
        g += nested_conds(n)
    elif kind == "data":
        prev = "x"
        for i in range(n):
            g.append(node("n%d" % i, "Identity", (prev,), type_attr("T")))
            prev = "n%d" % i
    else:
        g.append(node("c0", "NoOp"))
        for i in range(1, n):
            g.append(node("c%d" % i, "NoOp", ("^c%d" % (i - 1),)))
        g.append(node("y", "Identity", ("x", "^c%d" % (n - 1)), type_attr("T")))
    sys.stdout.buffer.write(b"".join(g))


if __name__ == "__main__":
    main()
