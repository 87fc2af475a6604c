#!/bin/sh
# ctest `install`: installs eddy into a prefix under the build tree, then uses
# it from outside, as a user would:
#   1. the layout, and what libeddyrt exports (only the eddy_rt_* API and its
#      helpers: nothing of the IR or the compiler);
#   2. this directory as a separate CMake project (find_package(eddy),
#      eddy_add_model on model.eddy, on its gradient (GRAD_WRT) and on two
#      TensorFlow GraphDefs, a loop and an RNN with its gradient; static and
#      shared runtime), built and run;
#   3. examples/app and examples/revnet, copied out of the tree, configured
#      and built against the prefix as projects of their own, and run;
#   4. `eddy compile` by hand and a C99 compile + link with the flags of
#      `pkg-config eddyrt`, run.
# usage: run.sh SOURCE_DIR BUILD_DIR CMAKE GENERATOR MAKE_PROGRAM C_COMPILER
set -eu
if [ $# -ne 6 ]; then
  echo "usage: $0 SOURCE_DIR BUILD_DIR CMAKE GENERATOR MAKE_PROGRAM C_COMPILER" >&2
  exit 2
fi
src=$1 build=$2 cmake=$3 generator=$4 make_program=$5 cc=$6
here=$src/tests/install
work=$build/tests/install
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work/pc"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

echo "== cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/eddy lib/libeddyrt.a lib/libeddyrt.so include/eddyrt.h \
  lib/cmake/eddy/eddyConfig.cmake lib/cmake/eddy/eddyConfigVersion.cmake \
  lib/cmake/eddy/eddyTargets.cmake lib/cmake/eddy/EddyModel.cmake \
  lib/pkgconfig/eddyrt.pc; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
"$prefix/bin/eddy" --help >/dev/null 2>&1 || fail "installed eddy does not run"

echo "== libeddyrt symbols"
# The archive: every global is eddy_rt_* (the API), rt_* (its internals
# shared across its objects) or mgpu* (the GPU runtime ABI that code compiled
# with --target=cuda calls, runtime/cuda.c); nothing of the IR (eddy_ir_*,
# eddy_* other than eddy_rt_*). What it needs from outside is libc, libm,
# pthread (and the sanitizer runtimes in a sanitizer build).
nm -g --defined-only "$prefix/lib/libeddyrt.a" | awk 'NF == 3 {print $3}' |
  sort -u >"$work/static-defined.txt"
[ -s "$work/static-defined.txt" ] || fail "libeddyrt.a defines nothing"
if grep -v -E '^(eddy_rt_|rt_|mgpu|__odr_asan\.)' "$work/static-defined.txt"; then
  fail "libeddyrt.a defines the symbols above (not eddy_rt_* / rt_* / mgpu*)"
fi
grep -qx eddy_rt_entry_check_arg "$work/static-defined.txt" ||
  fail "libeddyrt.a lacks eddy_rt_entry_check_arg"
nm -g --undefined-only "$prefix/lib/libeddyrt.a" | awk 'NF == 2 {print $2}' |
  sort -u | comm -23 - "$work/static-defined.txt" >"$work/static-undefined.txt"
if grep -E '^(eddy|rt_)' "$work/static-undefined.txt"; then
  fail "libeddyrt.a needs the symbols above from outside"
fi
# The shared library exports the eddy_rt_* API and the mgpu* ABI only.
nm -D --defined-only "$prefix/lib/libeddyrt.so" | awk 'NF == 3 {print $3}' |
  sort -u >"$work/shared-defined.txt"
if grep -v -E '^(eddy_rt_|mgpu)' "$work/shared-defined.txt"; then
  fail "libeddyrt.so exports the symbols above (not eddy_rt_* / mgpu*)"
fi
grep -qx mgpuLaunchKernel "$work/shared-defined.txt" ||
  fail "libeddyrt.so lacks mgpuLaunchKernel"
grep -qx eddy_rt_entry_check_arg "$work/shared-defined.txt" ||
  fail "libeddyrt.so lacks eddy_rt_entry_check_arg"
echo "libeddyrt.a: $(wc -l <"$work/static-defined.txt") globals," \
  "libeddyrt.so: $(wc -l <"$work/shared-defined.txt") exported"

echo "== an outside CMake project: find_package(eddy) + eddy_add_model"
graphdef=$src/tests/fixtures/tf/count_v2/model.pb
rnn_grad=$src/tests/fixtures/tf/rnn_grad_v2
# The GPU target's model only where the installed eddy finds a CUDA toolkit.
mkdir -p "$work/probe"
if "$prefix/bin/eddy" compile "$here/model.eddy" --entry doubling \
  --target=cuda -o "$work/probe/doubling.o" >"$work/probe/log" 2>&1; then
  cuda=ON
else
  cuda=OFF
  echo "(no CUDA toolkit: the cuda model is left out)"
fi
"$cmake" -S "$here" -B "$work/project" -G "$generator" \
  -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" -DEDDY_TEST_GRAPHDEF="$graphdef" \
  -DEDDY_TEST_RNN_GRAD_DIR="$rnn_grad" -DEDDY_TEST_CUDA=$cuda \
  >"$work/project-configure.log" 2>&1 ||
  { cat "$work/project-configure.log"; fail "configuring tests/install"; }
"$cmake" --build "$work/project" >"$work/project-build.log" 2>&1 ||
  { cat "$work/project-build.log"; fail "building tests/install"; }
for app in app_static app_shared app_fma app_grad app_grad_ckpt app_graphdef; do
  "$work/project/$app" || fail "$app"
done
"$work/project/app_rnn_grad" "$rnn_grad" || fail "app_rnn_grad"
echo "== the examples, copied out of the tree, as projects of their own"
for ex in app revnet; do
  cp -r "$src/examples/$ex" "$work/example-$ex"
  "$cmake" -S "$work/example-$ex" -B "$work/example-$ex/build" -G "$generator" \
    -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$work/example-$ex.log" 2>&1 &&
    "$cmake" --build "$work/example-$ex/build" >>"$work/example-$ex.log" 2>&1 ||
    { cat "$work/example-$ex.log"; fail "building examples/$ex on its own"; }
done
"$work/example-app/build/eddy_example_app" 1 -0.5 2 100 1e-5 >/dev/null ||
  fail "examples/app built on its own"
"$work/example-revnet/build/revnet_example" 16 >/dev/null ||
  fail "examples/revnet built on its own"
if [ "$cuda" = ON ]; then
  EDDY_CUDA_DRIVER=$work/no-libcuda.so.1 "$work/project/app_cuda" ||
    fail "app_cuda (the model compiled for the GPU, without a device)"
fi
# The static runtime is linked in; the shared one is found through the
# RUNPATH CMake wrote.
if ldd "$work/project/app_static" | grep -q libeddyrt; then
  fail "app_static needs libeddyrt.so"
fi
ldd "$work/project/app_shared" | grep -q "libeddyrt.so.1 => $prefix/lib/" ||
  fail "app_shared does not use the installed libeddyrt.so"

echo "== eddy compile + pkg-config eddyrt"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs eddyrt) || fail "pkg-config eddyrt"
echo "pkg-config --cflags --libs eddyrt: $flags"
"$prefix/bin/eddy" compile "$here/model.eddy" --entry doubling \
  -o "$work/pc/doubling.o" --header "$work/pc/doubling.h" ||
  fail "eddy compile"
# The generated header and eddyrt.h are strict C99.
# shellcheck disable=SC2086 # $flags is a list of flags
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror \
  -DEDDY_TEST_MODEL_HEADER='"doubling.h"' -I"$work/pc" "$here/main.c" \
  "$work/pc/doubling.o" $flags -Wl,-rpath,"$prefix/lib" -o "$work/pc/app" ||
  fail "compiling with pkg-config flags"
"$work/pc/app" || fail "the pkg-config build"
# Static: the archive by path, what it needs from Libs.private, and (in a
# sanitizer build) the sanitizer flags of Libs.
libdir=$(pkg-config --variable=libdir eddyrt)
# shellcheck disable=SC2046 # pkg-config prints a list of flags
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror \
  -DEDDY_TEST_MODEL_HEADER='"doubling.h"' -I"$work/pc" "$here/main.c" \
  "$work/pc/doubling.o" $(pkg-config --cflags eddyrt) "$libdir/libeddyrt.a" \
  $(pkg-config --libs-only-other eddyrt) -lm -pthread -o "$work/pc/app_static" ||
  fail "compiling against libeddyrt.a with pkg-config flags"
"$work/pc/app_static" >/dev/null || fail "the static pkg-config build"
if ldd "$work/pc/app_static" | grep -q libeddyrt; then
  fail "app_static (pkg-config) needs libeddyrt.so"
fi
echo "install test passed"
