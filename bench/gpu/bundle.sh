#!/usr/bin/env bash
# Builds, on a machine with eddy's toolchain, everything a GPU machine without
# it needs to check and time eddy's CUDA target: executables, their inputs and
# expected outputs, and the shared libraries they load. The GPU machine then
# runs bench/gpu/device.sh on the unpacked archive.
#
#   bench/gpu/bundle.sh [-o ARCHIVE] [--cases DIR] [--tf32] [--arch sm_90]
#                       [--lit-only] [--target cpu]
#
# - every TensorFlow fixture of tests/fixtures/tf (TensorFlow's outputs are
#   the oracle) compiled AOT for CUDA and linked into bench/compare's driver;
# - with --cases DIR (exported by `bench/compare/models.py --out DIR`), the
#   bench/compare cases the same way (gradient cases through `eddy grad`),
#   with models.py and worker.py so the device can time JAX beside them
#   (with --tf32, each also as run-tf32, built --gpu-matmul-precision=tf32);
# - the lit programs (tests/lit/gpu/programs.test: the compiled runs of
#   tests/lit/cpu's program tests), each with its inputs and the evaluator's
#   results, or the CPU target's error message where the run must fail
#   (tests/lit/gpu/Inputs/as_gpu.py --bundle makes them);
# - bench/gpu/chain.eddy, the fused-chain micro benchmark;
# - libopenblas and its Fortran runtime.
# --lit-only leaves out the fixtures and the chain. --target cpu builds every
# executable for the CPU target instead: a bundle that device.py runs here,
# to check the bundle and the comparisons without a GPU.
# The build is EDDY_BENCH_BUILD (default build-bench, Release, made if
# missing). The archive defaults to build-bench/gpu-bundle.tar.xz.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${EDDY_BENCH_BUILD:-$src/build-bench}
archive=$build/gpu-bundle.tar.xz
cases=""
arch=sm_90
tf32=0
lit_only=0
target=cuda
while [ $# -gt 0 ]; do
  case $1 in
    -o) archive=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --tf32) tf32=1; shift ;;
    --lit-only) lit_only=1; shift ;;
    --target) target=$2; shift 2 ;;
    *) echo "bundle.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" eddy eddy_rt
eddy=$build/tools/eddy
rtlib=$build/runtime/libeddy_rt.a
[ -f "$rtlib" ] || { echo "bundle.sh: no $rtlib" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
out=$stage/gpu-bundle
mkdir -p "$out/lib" "$out/fx" "$out/cases" "$out/micro" "$out/lit"
for l in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ {print $NF; exit}')
  [ -n "$p" ] || { echo "bundle.sh: $l not found" >&2; exit 1; }
  cp -L "$p" "$out/lib/"
done
cp "$here/device.sh" "$here/device.py" "$out/"

# The feeds and fetches of a manifest as eddy import flags.
io_flags() {
  python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
fetch = [f if isinstance(f, str) else f["name"] for f in m["fetches"]]
print(" ".join(["--feed " + f["name"] for f in m["feeds"]] + ["--fetch " + f for f in fetch]))' "$1"
}

# import + functionalize/legalize: DIR/model.pb -> WORK/model.eddy
import_tf() { # manifest-dir work-dir
  "$eddy" import "$1/model.pb" --prune $(io_flags "$1/manifest.json") -o "$2/tf.eddy" &&
    "$eddy" opt "$2/tf.eddy" --passes=functionalize,legalize-tf,shape-infer,canonicalize \
      -o "$2/model.eddy"
}

# IR entry work-dir [name [eddy-compile-flags...]]: compiled for CUDA and linked
# into the AOT driver as WORK/NAME (default run).
build_exe() {
  local ir=$1 entry=$2 w=$3 name=${4:-run}
  shift $(($# < 4 ? $# : 4))
  local tflags=(--target=cuda --gpu-arch="$arch")
  [ "$target" = cuda ] || tflags=(--target="$target")
  "$eddy" compile "$ir" --entry "$entry" --prefix bench_model "${tflags[@]}" \
    --march=x86-64-v3 "$@" -o "$w/bench_model.o" \
    --header "$w/bench_model.h" &&
    cc -O2 -std=c11 -DEDDY_BENCH_AOT -I"$w" -I"$src" -I"$src/runtime" \
      "$src/bench/compare/eddy_driver.c" "$w/bench_model.o" "$rtlib" \
      -lm -pthread -lopenblas -ldl -o "$w/$name" &&
    strip -s "$w/$name" && rm -f "$w/bench_model.o" "$w/tf.eddy"
}

built=0 failed=0
for d in "$src"/tests/fixtures/tf/*/; do
  [ $lit_only = 0 ] || break
  n=$(basename "$d"); w=$out/fx/$n; mkdir -p "$w"
  if import_tf "$d" "$w" 2>"$w/build.log" && build_exe "$w/model.eddy" main "$w" 2>>"$w/build.log"; then
    cp "$d"/in_*.npy "$d"/out_*.npy "$d/manifest.json" "$w/"
    built=$((built + 1))
  else
    echo "fixture $n: not built: $(tail -n 2 "$w/build.log")"; failed=$((failed + 1))
  fi
done
[ $lit_only = 1 ] || echo "fixtures: $built built, $failed not"

# The lit programs: as_gpu.py runs the tests' other RUN lines (FileCheck is
# LLVM's) and writes each compiled run's inputs and expected results; one
# executable per program (module, entry, passes).
llvm_bin=$(sed -n 's|^LLVM_DIR:PATH=\(.*\)/lib/cmake/llvm$|\1/bin|p' "$build/CMakeCache.txt")
lt=$src/tests/lit/cpu
PATH=$llvm_bin:$PATH python3 "$src/tests/lit/gpu/Inputs/as_gpu.py" --eddy "$eddy" \
  --examples "$src/examples" --tmp "$stage/lit-tmp" --bundle "$out/lit" \
  "$lt"/{eval-programs,ad-programs,gradients,lists,dynamic-shapes,dynamic-errors}.test \
  "$lt/runtime-errors.eddy" ||
  echo "bundle.sh: some RUN lines of the lit tests failed (above); their runs may be missing"
built=0 failed=0
while IFS=$'\t' read -r n ir entry; do
  w=$out/lit/$n
  if build_exe "$ir" "$entry" "$w" 2>"$w/build.log"; then
    rm -f "$w/build.log" "$w/bench_model.h" "$w/model.eddy"
    built=$((built + 1))
  else
    echo "lit $n: not built: $(tail -n 2 "$w/build.log")" | tee -a "$out/lit/excluded.txt"
    rm -rf "$w"; failed=$((failed + 1))
  fi
done <"$out/lit/build.list"
rm -rf "$stage/lit-tmp" "$out/lit/build.list"
echo "lit programs: $built built, $failed not ($(ls -d "$out"/lit/*/run[0-9]* | wc -l) runs)"

if [ -n "$cases" ]; then
  cp "$src/bench/compare/models.py" "$src/bench/compare/worker.py" "$out/"
  for d in "$cases"/*/; do
    n=$(basename "$d"); w=$out/cases/$n; mkdir -p "$w"
    cp "$d/manifest.json" "$w/"
    wrt=$(python3 -c 'import json, sys; print(",".join(json.load(open(sys.argv[1])).get("wrt", [])))' "$d/manifest.json")
    ir=$w/model.eddy entry=main ok=1
    import_tf "$d" "$w" 2>"$w/build.log" || ok=0
    if [ $ok = 1 ] && [ -n "$wrt" ]; then
      "$eddy" grad "$ir" --entry main --wrt "$wrt" -o "$w/grad.eddy" 2>>"$w/build.log" || ok=0
      ir=$w/grad.eddy entry=main_grad
    fi
    if [ $ok = 1 ] && [ $tf32 = 1 ] && [[ $n != loop_* ]]; then
      build_exe "$ir" "$entry" "$w" run-tf32 --gpu-matmul-precision=tf32 2>>"$w/build.log" || ok=0
    fi
    if [ $ok = 1 ] && build_exe "$ir" "$entry" "$w" 2>>"$w/build.log"; then
      # A gradient's seed arguments (d(sum of outputs)): ones of their types.
      python3 "$here/device.py" --write-seeds "$ir" "$entry" "$w"
    else
      echo "case $n: not built: $(tail -n 2 "$w/build.log")"
      rm -rf "$w"
    fi
  done
  echo "cases: $(ls "$out"/cases/*/run 2>/dev/null | wc -l) built"
fi

if [ $lit_only = 0 ]; then
  mkdir -p "$out/micro/chain"
  build_exe "$here/chain.eddy" main "$out/micro/chain"
fi
mkdir -p "$(dirname "$archive")"
tar -C "$stage" -cJf "$archive" gpu-bundle
echo "bundle: $archive ($(du -h "$archive" | cut -f1))"
