#!/usr/bin/env bash
# Sets up, builds eddy, and runs it on the bundled examples: optimizes
# examples/demo.eddy and runs it in the reference evaluator; then compiles
# examples/app/model.eddy to an object, links it into the C program of
# examples/app, runs it, and compares its results with the evaluator's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/scripts/setup.sh"
cmake -S "$root" -B "$root/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDDY_BUILD_TESTS=OFF >/dev/null
ninja -C "$root/build/release" eddy eddy_example_app >/dev/null

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

echo
echo "== examples/app: examples/app/model.eddy compiled to an object (eddy compile, through"
echo "   eddy_add_model), linked into a C program, run natively"
app_out=$("$root/build/release/examples/app/eddy_example_app" 1 -0.5 2 100 1e-5 | grep '^result')
echo "$app_out"
echo "== the same model and inputs in the reference evaluator"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/examples/app/write_npy.py" "$tmp/x.npy" 1x3 1 -0.5 2
eval_out=$("$eddy" run "$root/examples/app/model.eddy" --entry rnn --mode=eval --preview all \
  --input arg0="$tmp/x.npy" --input arg1=100 --input arg2=1e-5 | grep '^result')
echo "$eval_out"
python3 - "$app_out" "$eval_out" <<'PY'
import re, sys
def nums(text):
    return [float(x) for x in re.findall(r"(?<=[\[ ])-?[0-9][0-9.e+-]*(?=[,\]]|$)", text.split("=", 1)[1])] \
        if "=" in text else []
app = [nums(l) for l in sys.argv[1].splitlines()]
ref = [nums(l) for l in sys.argv[2].splitlines()]
ok = len(app) == len(ref) and all(
    len(a) == len(r) and all(abs(x - y) <= 1e-6 * max(1.0, abs(y)) for x, y in zip(a, r))
    for a, r in zip(app, ref))
print("== compiled and evaluated results " + ("agree" if ok else "DIFFER"))
sys.exit(0 if ok else 1)
PY
