#!/usr/bin/env bash
# Builds the fuzz targets with clang 19, libFuzzer, ASan and UBSan into
# build/fuzz, and runs one of them for SECONDS seconds (docs/reliability.md).
#
# usage: scripts/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAG...]
#   TARGET: graphdef, ir_text, npy, grad or compile
#
# The corpus grows in build/fuzz/corpus/TARGET, seeded from the fixtures, the
# lit tests, tests/fuzz/corpus/TARGET and tests/fuzz/regressions/TARGET. A
# crash, leak or timeout is written to build/fuzz/artifacts/TARGET/; once
# fixed, its input belongs in tests/fuzz/regressions/TARGET/. EDDY_JOBS
# bounds the build's parallelism (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  echo "usage: $0 TARGET SECONDS [LIBFUZZER_FLAG...]" >&2
  echo "  TARGET: graphdef, ir_text, npy, grad or compile" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
target=$1 seconds=$2
shift 2
case "$target" in
  graphdef) suffix=.pb; seed_dirs=("$root/tests/fixtures/tf" "$root/tests/fixtures/tf-bad");
            flags=(-max_len=65536) ;;
  ir_text | grad | compile) suffix=.eddy; seed_dirs=("$root/tests/lit");
            flags=(-max_len=16384 "-dict=$root/tests/fuzz/ir_text.dict") ;;
  npy) suffix=.npy; seed_dirs=("$root/tests/fixtures/tf"); flags=(-max_len=4096) ;;
  *) usage ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || usage

build=$root/build/fuzz
if ! command -v clang-19 >/dev/null; then
  echo "fuzz: clang-19 is missing (scripts/setup.sh installs it)" >&2
  exit 1
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -g" -DEDDY_FUZZ=ON -DEDDY_BUILD_TESTS=OFF >/dev/null
ninja -C "$build" -j "${EDDY_JOBS:-2}" "fuzz_$target"

# Seeds: the files of the fixtures and tests with the target's suffix, each
# copied under a name made of its path.
seeds=$build/seeds/$target
rm -rf "$seeds"
mkdir -p "$seeds" "$build/corpus/$target" "$build/artifacts/$target"
for dir in "${seed_dirs[@]}"; do
  while IFS= read -r -d '' f; do
    rel=${f#"$root/"}
    cp "$f" "$seeds/${rel//\//_}"
  done < <(find "$dir" -type f -name "*$suffix" -print0)
done
for dir in corpus regressions; do
  find "$root/tests/fuzz/$dir/$target" -type f ! -name '.*' -exec cp -t "$seeds" {} +
done

cd "$build"
exec "./tests/fuzz/fuzz_$target" "corpus/$target" "seeds/$target" \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -artifact_prefix="artifacts/$target/" -print_final_stats=1 \
  "${flags[@]}" "$@"
