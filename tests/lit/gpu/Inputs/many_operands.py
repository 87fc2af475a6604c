"""Writes an eddy IR function @many of N arguments of type tensor<?x?xf32>
that sums them all: one fused elementwise kernel that reads N buffers of
two dynamic dims (each memref descriptor is 7 words, 56 bytes of kernel
parameters)."""
import sys

n = int(sys.argv[1])
t = "tensor<?x?xf32>"
args = ", ".join(f"%a{i}: {t}" for i in range(n))
lines = [f"func.func @many({args}) -> {t} {{"]
acc = "%a0"
for i in range(1, n):
    lines.append(f'  %s{i} = "core.add"({acc}, %a{i}) : ({t}, {t}) -> {t}')
    acc = f"%s{i}"
lines.append(f'  "func.return"({acc}) : ({t}) -> ()')
lines.append("}")
print("\n".join(lines))
