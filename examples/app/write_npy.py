"""Writes a float .npy file of the given shape from numbers on the command
line, with the standard library only (the tests must not need numpy):
    python3 write_npy.py OUT.npy 1x3 1 -0.5 2        (float32)
    python3 write_npy.py OUT.npy 2x3:f8 1 2 3 4 5 6  (float64)
    python3 write_npy.py OUT.npy scalar:f8 1.5       (a rank-0 float64)"""
import struct
import sys

out, spec = sys.argv[1], sys.argv[2]
spec, _, kind = spec.partition(":")
kind = kind or "f4"
fmt = {"f4": "f", "f8": "d"}[kind]
shape = () if spec == "scalar" else tuple(int(d) for d in spec.split("x"))
values = [float(v) for v in sys.argv[3:]]
header = "{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }" % (kind,
    "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
pad = 64 - (10 + len(header) + 1) % 64
header = header + " " * pad + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
