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
echo "== examples/app: examples/app/model.eddy and its gradient compiled to objects (eddy"
echo "   compile and eddy grad, through eddy_add_model), linked into a C program, run natively"
app_out=$("$root/build/release/examples/app/eddy_example_app" 1 -0.5 2 100 1e-5 | grep '^result')
echo "$app_out"
echo "== the same model, its gradient and inputs in the reference evaluator"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npy="$root/examples/app/write_npy.py"
python3 "$npy" "$tmp/x.npy" 1x3 1 -0.5 2
python3 "$npy" "$tmp/w.npy" 3x4 0.5 -0.25 0.125 0.75 -0.5 0.25 1.0 0.0 0.25 0.5 -0.75 0.5
python3 "$npy" "$tmp/u.npy" 4x4 0.25 0.0 0.125 -0.25 0.0 0.5 0.0 0.125 -0.125 0.0 0.25 0.0 0.25 -0.25 0.0 0.375
python3 "$npy" "$tmp/b.npy" 1x4 0.1 -0.2 0.05 0.0
python3 "$npy" "$tmp/seed.npy" 1x4 1 1 1 1
"$eddy" grad "$root/examples/app/model.eddy" --entry rnn --wrt arg0,arg1,arg2,arg3 -o "$tmp/grad.eddy"
set -- --mode=eval --preview all --input arg0="$tmp/x.npy" --input arg1="$tmp/w.npy" \
  --input arg2="$tmp/u.npy" --input arg3="$tmp/b.npy" --input arg4=100 --input arg5=1e-5
eval_out=$({ "$eddy" run "$root/examples/app/model.eddy" --entry rnn "$@" &&
  "$eddy" run "$tmp/grad.eddy" --entry rnn_grad "$@" --input arg6="$tmp/seed.npy" \
    --input arg7=0; } | grep '^result')
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
