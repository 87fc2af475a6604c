#!/usr/bin/env bash
# Sets up, builds eddy, and runs it on a bundled example: parse, verify,
# optimize and print examples/demo.eddy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/setup.sh"
cmake -S "$root" -B "$root/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDDY_BUILD_TESTS=OFF >/dev/null
ninja -C "$root/build/release" eddy >/dev/null

eddy="$root/build/release/tools/eddy"
echo "== input: examples/demo.eddy"
grep -v '^//' "$root/examples/demo.eddy"
echo
echo "== eddy opt examples/demo.eddy --passes=shape-infer,canonicalize,licm,cse,dce"
"$eddy" opt "$root/examples/demo.eddy" --passes=shape-infer,canonicalize,licm,cse,dce
echo
echo "== eddy run examples/demo.eddy (reference evaluator, n = 3)"
"$eddy" run "$root/examples/demo.eddy" --mode=eval \
  --input arg0="$root/examples/demo_inputs/x.npy" \
  --input arg1="$root/examples/demo_inputs/w.npy" --input arg2=3
