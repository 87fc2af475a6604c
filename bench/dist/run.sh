#!/usr/bin/env bash
# Distributed execution (docs/distributed.md): the stacked Keras model of
# tests/fixtures/tf/keras_stacked_v2 (an LSTM layer, then a GRU layer and a
# dense layer) on one rank, and pipelined over two (the LSTM on rank 0, the
# GRU and dense layers on rank 1), under mpirun; --stats gives each rank's
# messages and bytes. Usage: bench/dist/run.sh [EDDY] [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
eddy=${1:-$root/build/test/tools/eddy}
reps=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
F=$root/tests/fixtures/tf/keras_stacked_v2
pl=$(mktemp)
printf 'gru_5_1* 1\ndense_1_1* 1\n* 0\n' > "$pl"
args=("$F/model.pb" --input "x=$F/in_0.npy" --fetch Identity:0 --mode=distributed --workers 1 --stats)
for n in 1 2; do
  for ((i = 0; i < reps; i++)); do
    if [[ $n == 1 ]]; then place=(); else place=(--placement "$pl"); fi
    mpirun -n $n --oversubscribe "$eddy" run "${args[@]}" "${place[@]}" 2>&1 | grep 'dist stats'
  done
done
rm -f "$pl"
