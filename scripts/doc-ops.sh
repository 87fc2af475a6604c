#!/usr/bin/env bash
# Rewrites the list of supported TensorFlow ops in docs/import.md (between
# its "begin/end: eddy import --list-ops" markers) from `eddy import
# --list-ops`. tests/lit/tf/supported-ops.test fails when the two differ.
# usage: scripts/doc-ops.sh [path/to/eddy]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
eddy=${1:-$root/build/test/tools/eddy}
doc=$root/docs/import.md
begin='<!-- begin: eddy import --list-ops -->'
end='<!-- end: eddy import --list-ops -->'
grep -qF -- "$begin" "$doc" && grep -qF -- "$end" "$doc" ||
  { echo "doc-ops.sh: $doc has no op-list markers" >&2; exit 1; }
list=$("$eddy" import --list-ops | awk '
  { item[NR] = $0 }
  END {
    line = ""
    for (i = 1; i <= NR; i++) {
      w = item[i] (i < NR ? "," : "")
      if (line != "" && length(line) + 1 + length(w) > 100) { print line; line = w }
      else line = line == "" ? w : line " " w
    }
    if (line != "") print line
  }')
tmp=$(mktemp)
awk -v begin="$begin" -v end="$end" -v list="$list" '
  $0 == begin { print; print list; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }' "$doc" >"$tmp"
mv "$tmp" "$doc"
echo "docs/import.md: $("$eddy" import --list-ops | wc -l) ops"
