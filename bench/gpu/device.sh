#!/usr/bin/env bash
# On the GPU machine, in an unpacked bench/gpu/bundle.sh archive:
#   ./device.sh [OUTDIR] [PHASES] [device.py options...]
# finds the device's cuBLAS, points the executables at the bundle's libraries,
# runs device.py (fixtures, lit, loops, cases, chain; see its head) and then
# compute-sanitizer's memcheck on a few gradient fixtures (EDDY_GPU_SANITIZE=0
# skips it). Results go to
# OUTDIR (default $OUT or ./gpu-results): results.md, results.json, and
# sanitizer.txt. Exits non-zero when a check failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-${OUT:-$here/gpu-results}}
phases=${2:-fixtures,lit,loops,cases,chain}
shift $(($# < 2 ? $# : 2))
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
if [ -z "${EDDY_CUBLAS:-}" ]; then
  EDDY_CUBLAS=$(find /usr/local /usr/lib /opt -name 'libcublas.so.*' ! -name '*Lt*' 2>/dev/null |
    sort -V | tail -n 1)
fi
echo "cuBLAS: ${EDDY_CUBLAS:-not found}"
export EDDY_CUBLAS
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
status=0
python3 "$here/device.py" "$here" --phases "$phases" --out "$out" "$@" || status=$?
if [ "${EDDY_GPU_SANITIZE:-1}" = 0 ]; then
  echo "compute-sanitizer: skipped (EDDY_GPU_SANITIZE=0)"
elif command -v compute-sanitizer >/dev/null 2>&1; then
  : >"$out/sanitizer.txt"
  for n in lstm_grad_v2 map_fn_grad_v1 nested_grad_v2 cond_in_while_grad_v1; do
    d=$here/fx/$n
    [ -x "$d/run" ] || continue
    ins=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
print(" ".join("--input %s/%s" % (sys.argv[1], f["file"]) for f in m["feeds"]))' "$d")
    mkdir -p "/tmp/eddy-gpu-scratch/cs/$n"
    echo "== compute-sanitizer memcheck $n" | tee -a "$out/sanitizer.txt"
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 "$d/run" --mode=aot $ins \
      --out "/tmp/eddy-gpu-scratch/cs/$n" --min-runs 1 --max-runs 1 2>&1 | tail -n 3 |
      tee -a "$out/sanitizer.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  done
else
  echo "compute-sanitizer: not on this machine"
fi
exit $status
