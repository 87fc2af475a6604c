"""Checks legalize-tile-dynamic.eddy's results (0.npy: x [B, 1, C] tiled
[1, 4, 1]; 1.npy: y [R, C] tiled [3, 2]) in each directory against the
tiling computed here. Standard library only.
    python3 tile_check.py X.npy Y.npy DIR..."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "cpu", "Inputs"))
from npy_close import read  # noqa: E402

_, xs, x = read(sys.argv[1])
_, ys, y = read(sys.argv[2])
b, c = xs[0], xs[2]
want0 = [x[i * c + k] for i in range(b) for _ in range(4) for k in range(c)]
r, cc = ys
want1 = [y[(i % r) * cc + (j % cc)] for i in range(3 * r) for j in range(2 * cc)]
for d in sys.argv[3:]:
    _, s0, got0 = read(os.path.join(d, "0.npy"))
    _, s1, got1 = read(os.path.join(d, "1.npy"))
    assert s0 == (b, 4, c) and list(got0) == want0, (d, s0)
    assert s1 == (3 * r, 2 * cc) and list(got1) == want1, (d, s1)
print("tiles ok")
