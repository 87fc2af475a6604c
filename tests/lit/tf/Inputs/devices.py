"""Writes a GraphDef whose nodes name their devices (NodeDef.device, field
4): z = tanh(x) * x with the Tanh on /job:worker/task:1 and the rest on
task 0, or every node on task 0 (`one`), or the Tanh on task 5 (`far`);
tests/lit/tf/devices.test runs it over two ranks.
Usage: devices.py [split|one|far] > FILE.pb"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from long_chain import DT_FLOAT, attr, field, text, type_attr  # noqa: E402


def node(name, op, inputs, attrs, device):
    body = text(1, name) + text(2, op)
    for i in inputs:
        body += text(3, i)
    return field(1, body + text(4, device) + attrs)


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "split"
    t0 = "/job:worker/replica:0/task:0/device:CPU:0"
    t1 = {"split": "/job:worker/replica:0/task:1/device:CPU:0",
          "far": "/job:worker/replica:0/task:5/device:CPU:0"}.get(kind, t0)
    g = (node("x", "Placeholder", (), type_attr("dtype") + attr("shape", field(7, b"")), t0) +
         node("y", "Tanh", ("x",), type_attr("T"), t1) +
         node("z", "Mul", ("y", "x"), type_attr("T"), t0))
    sys.stdout.buffer.write(g)


if __name__ == "__main__":
    main()
