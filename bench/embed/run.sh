#!/usr/bin/env bash
# A compiled model embedded in a long-running process (bench/README.md,
# "Long-running embedding"): tests/embed/embed.c's `rss` mode, CALLS calls
# of the gradient of examples/app/model.eddy on one runtime context, the
# resident set sampled SAMPLES times. Writes the curve to OUT (CSV: calls,
# rss_kib) and prints the summary line and the time.
#   bench/embed/run.sh [BUILD] [CALLS] [SAMPLES] [OUT]
#   (default build/test 1000000 100 bench/embed/rss.csv)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/test}
calls=${2:-1000000}
samples=${3:-100}
out=${4:-$root/bench/embed/rss.csv}
ninja -C "$build" eddy_embed >/dev/null
start=$(date +%s.%N)
"$build/tests/embed/eddy_embed" rss "$calls" "$samples" >"$out.tmp"
end=$(date +%s.%N)
{ echo "calls,rss_kib"; awk '$1 == "rss" { print $2 "," $3 }' "$out.tmp"; } >"$out"
grep '^calls' "$out.tmp"
rm -f "$out.tmp"
awk -v s="$start" -v e="$end" -v n="$calls" \
  'BEGIN { printf "%d calls in %.1f s: %.1f us per call\n", n, e - s, (e - s) * 1e6 / n }'
