#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite twice: a normal build with
# warnings as errors, then an AddressSanitizer + UndefinedBehaviorSanitizer
# build. Exits non-zero on the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${EDDY_JOBS:-$(nproc)}

"$root/scripts/setup.sh"

run_suite() {
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -G Ninja -DEDDY_WERROR=ON "$@" >/dev/null
  ninja -C "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs"
}

echo "== build and test (Debug, -Werror)"
run_suite "$root/build/test" -DCMAKE_BUILD_TYPE=Debug
echo "== build and test (ASan + UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite "$root/build/asan" -DCMAKE_BUILD_TYPE=Debug -DEDDY_SANITIZE=ON
echo "== all tests passed"
