#!/bin/bash
# session w round 6: GPU label on a2c882b (bin-w2)
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcw6
mkdir -p build && ln -sfn ../.devcarry/bin-w2 build/bin
( time timeout 480 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed" $OUT/gpu_tests.log | tail -12
