"""Writes a GraphDef (binary protobuf, encoded by hand) with a long chain:
`data N`: Placeholder x -> N Identity nodes, each reading the one before;
`control N`: N NoOps, each with a control input on the one before, and an
Identity of x that waits on the last. Walks over such graphs must iterate,
not recurse once per node (a stack of 8 MiB holds a few ten thousand
frames). Usage: long_chain.py data|control N > FILE.pb"""
import sys

DT_FLOAT = 1


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


def type_attr(name):  # AttrValue.type (field 6, varint)
    return attr(name, varint(6 << 3) + varint(DT_FLOAT))


def node(name, op, inputs=(), attrs=b""):  # GraphDef.node, NodeDef 1 2 3
    body = text(1, name) + text(2, op)
    for i in inputs:
        body += text(3, i)
    return field(1, body + attrs)


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    # Placeholder x: dtype float, shape [] (AttrValue.shape 7, empty shape).
    g = [node("x", "Placeholder", (), type_attr("dtype") + attr("shape", field(7, b"")))]
    if kind == "data":
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


main()
