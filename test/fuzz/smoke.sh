#!/usr/bin/env bash
# ctest fuzz.smoke: builds the fuzz targets with clang (-DFUSEC_FUZZ=ON, a
# build tree of their own) and runs each for FUSEC_FUZZ_SECONDS (default 20)
# on its seed corpus. Exit 77 (skipped) without clang-19 and libFuzzer
# (Debian: clang-19, libclang-rt-19-dev; tools/bootstrap.sh installs them).
#   test/fuzz/smoke.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir="$1"
build="$2"
cxx="${FUSEC_FUZZ_CXX:-clang++-19}"
cc="${FUSEC_FUZZ_CC:-clang-19}"
if ! command -v "$cxx" >/dev/null || ! command -v "$cc" >/dev/null; then
  echo "fuzz.smoke: skipped: no $cxx"
  exit 77
fi
if [ ! -f "$("$cxx" -print-file-name=libclang_rt.fuzzer-x86_64.a)" ] &&
   [ ! -f "$("$cxx" --print-runtime-dir)/libclang_rt.fuzzer-x86_64.a" ]; then
  echo "fuzz.smoke: skipped: $cxx has no libFuzzer (libclang-rt-19-dev)"
  exit 77
fi
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DFUSEC_FUZZ=ON -DFUSEC_BUILD_TESTS=OFF \
  -DCUDAToolkit_ROOT="${CUDAToolkit_ROOT:-/usr/local/cuda}" >/dev/null
cmake --build "$build" --target fuzz-graph-json fuzz-compile fuzz-safetensors fuzz-onnx fuzz-cache-file fuzz-artifact
exec "$source_dir/test/fuzz/run.sh" "$build" "${FUSEC_FUZZ_SECONDS:-20}"
