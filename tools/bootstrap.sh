#!/usr/bin/env bash
# Quick start, step 1: install the build dependencies (Debian 12 packages), build
# fusec, and run it on a bundled example. Safe to run again: installed packages
# are skipped and the build is incremental.
#
# Needs the CUDA Toolkit (12 or 13) at /usr/local/cuda for NVRTC and the driver
# API headers; no GPU and no NVIDIA driver are needed to build or to compile kernels.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ python3 zlib1g-dev libzstd-dev libncurses-dev
          llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
          libcli11-dev nlohmann-json3-dev libgtest-dev
          libonnx-dev libprotobuf-dev protobuf-compiler
          python3-dev pybind11-dev libdlpack-dev  # the Python package (python/)
          clang-19 libclang-rt-19-dev)  # the fuzz targets (ctest fuzz.smoke)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ ! -f "$cuda/include/nvrtc.h" ]; then
  echo "bootstrap: error: no CUDA Toolkit at $cuda (nvrtc.h not found)." >&2
  echo "  Install CUDA 12 or 13 from NVIDIA, or set CUDAToolkit_ROOT." >&2
  exit 1
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$cuda"
cmake --build build
echo
echo "bootstrap: fusec built at build/bin/fusec; evaluating examples/gelu_bias.json:"
./build/bin/fusec eval examples/gelu_bias.json
