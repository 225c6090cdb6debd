#!/usr/bin/env bash
# Builds fusec with AddressSanitizer and UndefinedBehaviorSanitizer (clang,
# -DFUSEC_SANITIZE=ON, a build tree of its own) and runs the unit tests and
# the lit tests under them. Any report fails the run.
#   test/sanitize.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir="$1"
build="$2"
cxx="${FUSEC_SANITIZE_CXX:-clang++-19}"
cc="${FUSEC_SANITIZE_CC:-clang-19}"
if ! command -v "$cxx" >/dev/null; then
  echo "sanitize: skipped: no $cxx"
  exit 77
fi
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DFUSEC_SANITIZE=ON \
  -DCUDAToolkit_ROOT="${CUDAToolkit_ROOT:-/usr/local/cuda}" >/dev/null
cmake --build "$build" --target fusec fusec-opt fusec-unit-tests fusec-runtime-tests
# LLVM's inline allocator code in sanitized sources poisons memory that the
# uninstrumented LLVM libraries then use (test/fuzz/AsanOptions.cpp): manual
# poisoning is ignored, ASan's own checks stay.
export ASAN_OPTIONS="allow_user_poisoning=0:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
"$build/bin/fusec-unit-tests"
"$build/bin/fusec-runtime-tests"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -q "$build/test/lit"
