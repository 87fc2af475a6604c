"""Compares the .npy files of two `eddy run --output-dir` directories: same
dtype and shape, integers and bools equal, floats within ULPS units in the
last place or, when ATOL is given, within ATOL of each other (NaN equals
NaN). Standard library only. Exit 1 on a difference.
    python3 npy_close.py DIR_A DIR_B [ULPS [ATOL]]"""
import ast
import math
import os
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    descr, shape = header["descr"], tuple(header["shape"])
    body = data[start + hlen:]
    fmt = {"<f4": "f", "<f8": "d", "<f2": "e", "|b1": "?", "|i1": "b",
           "<i4": "i", "<i8": "q"}[descr]
    n = 1
    for d in shape:
        n *= d
    return descr, shape, struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)])


def ulps(a, b, descr):
    if math.isnan(a) and math.isnan(b):
        return 0
    if a == b:
        return 0
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return math.inf
    mant = {"<f8": 52, "<f4": 23, "<f2": 10}[descr]
    m = max(abs(a), abs(b))
    ulp = math.ldexp(1.0, math.frexp(m)[1] - 1 - mant)
    return abs(a - b) / ulp


def main():
    a_dir, b_dir = sys.argv[1], sys.argv[2]
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 8
    atol = float(sys.argv[4]) if len(sys.argv) > 4 else -1.0
    names = sorted(os.listdir(a_dir))
    if names != sorted(os.listdir(b_dir)) or not names:
        print("different or empty result sets: %s vs %s" % (names, sorted(os.listdir(b_dir))))
        return 1
    bad = 0
    for name in names:
        da, sa, va = read(os.path.join(a_dir, name))
        db, sb, vb = read(os.path.join(b_dir, name))
        if (da, sa) != (db, sb):
            print("%s: %s%s vs %s%s" % (name, da, sa, db, sb))
            bad += 1
            continue
        for i, (x, y) in enumerate(zip(va, vb)):
            if da.startswith("<f"):
                if ulps(x, y, da) > tol and not abs(x - y) <= atol:
                    print("%s[%d]: %r vs %r" % (name, i, x, y))
                    bad += 1
            elif x != y:
                print("%s[%d]: %r vs %r" % (name, i, x, y))
                bad += 1
    print("%d results compared, %d differences" % (len(names), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
