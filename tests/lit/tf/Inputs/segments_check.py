"""Checks legalize-segments-dynamic.eddy's result (0.npy: data [B, T, 3]
summed into 4 segments by ids floor(4 x + 2) of x [B, T]) in each directory
against the sums computed here. Standard library only.
    python3 segments_check.py X.npy DATA.npy DIR..."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "cpu", "Inputs"))
from npy_close import read  # noqa: E402

_, xs, x = read(sys.argv[1])
_, ds, d = read(sys.argv[2])
want = [0.0] * 12
for i in range(xs[0] * xs[1]):
    seg = int(math.floor(x[i] * 4.0 + 2.0))
    for c in range(3):
        want[seg * 3 + c] += d[i * 3 + c]
for out in sys.argv[3:]:
    _, s, got = read(os.path.join(out, "0.npy"))
    assert s == (4, 3), (out, s)
    assert all(abs(g - w) <= 1e-12 * max(1.0, abs(w)) for g, w in zip(got, want)), (out, got, want)
print("segments ok")
