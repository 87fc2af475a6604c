"""Writes .npy files of pseudo-random float64 values in [-0.5, 0.5), one per
SHAPE argument, named DIR/arg0.npy, DIR/arg1.npy, ... (standard library only):
    python3 rand_npy.py DIR SEED 5x3 4x4 scalar"""
import os
import random
import struct
import sys

out_dir, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
os.makedirs(out_dir, exist_ok=True)
for i, spec in enumerate(sys.argv[3:]):
    shape = () if spec == "scalar" else tuple(int(d) for d in spec.split("x"))
    n = 1
    for d in shape:
        n *= d
    dims = "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0]
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % dims
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(os.path.join(out_dir, "arg%d.npy" % i), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % n, *[rng.random() - 0.5 for _ in range(n)]))
