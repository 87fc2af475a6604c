#!/usr/bin/env bash
# eddy side by side with TensorFlow and JAX (bench/README.md): makes a Python virtual
# environment outside the repository (EDDY_BENCH_VENV, default ~/.cache/eddy-bench/venv)
# with tensorflow-cpu, jax[cpu], numpy and matplotlib from PyPI, builds eddy in Release
# (EDDY_BENCH_BUILD, default build-bench/), then runs bench/compare/run.py with the arguments
# given (e.g. --only rnn_fwd_100, --small) and writes bench/results.{md,json,png}.
# TensorFlow is required (the models are exported from it); JAX is skipped, with a note in
# the report, when it cannot be installed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=${EDDY_BENCH_VENV:-$HOME/.cache/eddy-bench/venv}
build=${EDDY_BENCH_BUILD:-$root/build-bench}
case "$venv" in
  "$root"|"$root"/*) echo "run.sh: EDDY_BENCH_VENV must be outside the repository" >&2; exit 2 ;;
esac

bash "$root/scripts/setup.sh"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "run.sh: installing python3-venv" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi

notes=()
if [[ ! -x "$venv/bin/python" ]]; then
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" --upgrade pip >/dev/null
"${pip[@]}" numpy matplotlib
# The models are defined and exported in TensorFlow, so without it nothing can run; without
# JAX its column says 'failed' and the report's header says why.
if ! "${pip[@]}" tensorflow-cpu; then
  echo "run.sh: could not install tensorflow-cpu, which exports the models eddy imports" >&2
  exit 1
fi
if ! "${pip[@]}" 'jax[cpu]'; then
  echo "run.sh: could not install jax[cpu]: its column will say 'failed'" >&2
  notes+=(--note "jax[cpu] could not be installed from PyPI on this machine; its column is empty")
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEDDY_BUILD_TESTS=OFF >/dev/null
ninja -C "$build" eddy eddy_rt eddy_compare_driver >/dev/null

exec "$venv/bin/python" "$root/bench/compare/run.py" --build "$build" "${notes[@]}" "$@"
