#!/usr/bin/env bash
# Installs the Debian packages eddy needs to build and test, when missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config python3
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libcmocka-dev protobuf-c-compiler libprotobuf-c-dev
  libopenblas-dev
  libopenmpi-dev openmpi-bin  # --mode=distributed across processes, its tests
  clang-19 libclang-rt-19-dev  # scripts/fuzz.sh: libFuzzer and the sanitizers
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install packages" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
