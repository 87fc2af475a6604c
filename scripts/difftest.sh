#!/usr/bin/env bash
# Runs the three-way differential test on N random programs from SEED
# (docs/reliability.md, "Differential testing of the executions"): each is
# run by the evaluator, the dataflow interpreter (1 and 2 workers),
# compiled CPU code and the kernels form (also after the passes of
# `eddy compile`, when they change it), and every tenth one is also
# differentiated and checked against finite differences.
#
# usage: scripts/difftest.sh N SEED [DIFFTEST_FLAG...]
#
# Builds build/test (Debug, as the RULES of the project say) if needed.
# Failures are shrunk, printed, and written to build/difftest/ (or
# $EDDY_DIFFTEST_OUT); every program is run even after a failure. Extra flags
# go to difftest (--grad-every K, --budget B, --quiet).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 2 ]] || { echo "usage: $0 N SEED [DIFFTEST_FLAG...]" >&2; exit 2; }
count=$1 seed=$2
shift 2
build=${EDDY_BUILD_DIR:-$root/build/test}
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEDDY_WERROR=ON
fi
ninja -C "$build" -j"${EDDY_JOBS:-2}" difftest
out=${EDDY_DIFFTEST_OUT:-$root/build/difftest}
mkdir -p "$out"
exec "$build/tests/difftest/difftest" --count "$count" --seed "$seed" \
  --keep-going --out "$out" "$@"
