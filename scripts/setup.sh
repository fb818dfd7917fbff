#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages) and builds the modelcost tool (the binary and, where
# the CUDA toolkit is found, its CUDA module) into build/; scripts/test.sh builds the tests too.
# Safe to re-run: installs only missing packages, rebuilds incrementally.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          libonnx-dev libprotobuf-dev protobuf-compiler libcli11-dev nlohmann-json3-dev libfmt-dev
          libtomlplusplus-dev libeigen3-dev libgtest-dev python3-onnx python3-venv python3-dev python3-jsonschema
          python3-torch chromium)
# --with-sanitizers: also clang and its sanitizer and libFuzzer runtimes (scripts/sanitize.sh, fuzz/).
if [ "${1:-}" = "--with-sanitizers" ]; then packages+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit, when present, is found through nvcc on PATH or its default prefix.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target modelcost_tool
