#!/usr/bin/env bash
# ThreadSanitizer check of the thread-safety rule of compiled code
# (docs/reliability.md, "Long-running embedding"): several threads call one
# compiled entry at once, each with its own runtime context. Builds
# libeddyrt's core (what compiled code links) with -fsanitize=thread, the
# model (the gradient of examples/app/model.eddy) with the eddy of BUILD,
# and tests/embed/embed.c against both, then runs `threads`, with a context
# per thread and with one shared. ctest runs it as embed/tsan in the normal
# build (about 3 s of CPU: the runtime compiled at -O0).
#   scripts/tsan.sh [BUILD] [THREADS] [CALLS]    # default build/test 4 300
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/test}
threads=${2:-4}
calls=${3:-300}
eddy=$build/tools/eddy
cc=${CC:-cc}
out=$build/tsan
[ -x "$eddy" ] || { echo "tsan.sh: no $eddy (build BUILD first)" >&2; exit 2; }
mkdir -p "$out"

"$eddy" grad "$root/examples/app/model.eddy" --entry rnn --wrt arg0,arg1,arg2,arg3 \
  -o "$out/grad.eddy"
"$eddy" compile "$out/grad.eddy" --entry rnn_grad --prefix rnn_grad \
  -o "$out/embed_rnn_grad.o" --header "$out/embed_rnn_grad.h"

flags=(-std=c11 -g -O0 -fsanitize=thread -I"$root" -I"$root/runtime" -I"$out")
objs=()
for src in status alloc pool tensor iter list entry version entry_nested gemm \
    cuda cuda_list compare; do
  "$cc" "${flags[@]}" -c "$root/runtime/$src.c" -o "$out/$src.o" &
  objs+=("$out/$src.o")
  # Two compilers at a time.
  if (( ${#objs[@]} % 2 == 0 )); then wait; fi
done
wait
"$cc" "${flags[@]}" "$root/tests/embed/embed.c" "$out/embed_rnn_grad.o" "${objs[@]}" \
  -o "$out/eddy_embed_tsan" -lm -lpthread -ldl
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" \
  "$out/eddy_embed_tsan" threads "$threads" "$calls"
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" \
  "$out/eddy_embed_tsan" threads "$threads" "$calls" shared
echo "tsan.sh: no data race reported"
