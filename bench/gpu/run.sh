#!/bin/sh
# On a machine with a CUDA device: builds eddy (Release, tests on), runs the
# GPU target's device tests (ctest label gpu-device) and the GPU benchmarks,
# and prints their tables. Usage: bench/gpu/run.sh [BUILD_DIR]
# (default build-gpu-bench). Needs the packages of scripts/setup.sh and the
# CUDA toolkit (ptxas, fatbinary, libdevice) in /usr/local/cuda or
# $EDDY_CUDA_TOOLKIT; the driver (libcuda.so.1) is loaded at run time.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src/build-gpu-bench}
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" eddy eddy_gpu_bench unit_gpu_test_gpu_tf
echo "== device tests (ctest -L gpu-device)"
status=0
ctest --test-dir "$build" -L gpu-device --output-on-failure || status=$?
echo "== GPU benchmarks"
"$build/bench/eddy_gpu_bench" || status=$?
exit $status
