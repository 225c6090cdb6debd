#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct4
echo "== sass audit"; timeout 120 python3 .devcarry/sass_scan.py .devcarry/cubins > $OUT/sass_audit.txt 2>&1; tail -25 $OUT/sass_audit.txt
mkdir -p build && ln -sfn ../.devcarry/bin-t1 build/bin
( time timeout 380 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed" $OUT/gpu_tests.log | tail -12
timeout 170 python3 bench/harness.py --cases decode_o_chain4_m32,decode_wide_chain4_m32 --no-max-autotune --fusec .devcarry/bin-t1/fusec --out $OUT/h > $OUT/harness.log 2>&1; tail -6 $OUT/harness.log
