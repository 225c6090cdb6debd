#!/usr/bin/env bash
# Runs the tests of ctest label `gpu` from build/bin without the build tree
# (for a GPU machine that received only build/bin): the same binaries, the same
# pass/skip/fail rules (exit 77 = skipped).
set -u
cd "$(dirname "$0")/../.."
status=0
run() {
  local name=$1; shift
  "$@"; local rc=$?
  case $rc in
    0) echo "gpu test $name: passed" ;;
    77) echo "gpu test $name: skipped" ;;
    *) echo "gpu test $name: FAILED (exit $rc)"; status=1 ;;
  esac
}
run gpu.cublaslt build/bin/gpu_cublaslt_test
run gpu.nccl build/bin/gpu_nccl_test
run gpu.e2e build/bin/gpu_e2e_test examples
run gpu.bench test/gpu/bench_test.sh build/bin/fusec .
run gpu.artifact test/gpu/artifact_test.sh build/bin/fusec .
run gpu.models test/gpu/models_test.sh build/bin/fusec .
# The Python package, where build/python holds one this Python imports.
if PYTHONPATH=build/python python3 -c "import fusec" 2>/dev/null; then
  run gpu.python env PYTHONPATH=build/python python3 test/gpu/python_test.py
else
  echo "gpu test gpu.python: skipped (no fusec package in build/python for this Python)"
fi
exit $status
