#!/bin/bash
# session w round 12: the pairs' arrive (relaxed vs release with the publish after it) in the runner; e2e examples on the readable canonical names (bin-w4)
cd "$(dirname "$0")/.."
( cd .devcarry/pm/softmax_dim0_variants/pairs && nvcc -O3 -arch=sm_90a -o /tmp/pr runner.cu 2>&1 | grep -i error; /tmp/pr ) 2>&1 | tee $OUT/pairs_runner12.log | grep -v "^| micro"
export FUSEC_CACHE_DIR=/tmp/fcw11
FUSEC_GPU_TEST_FILTER=".json" timeout 300 .devcarry/bin-w4/gpu_e2e_test examples 2>&1 | grep -v "cuBLASLt applied" | tail -3
FUSEC_CACHE_DIR=/tmp/fcw11 .devcarry/bin-w4/fusec run .devcarry/stack2.json --check 2>&1 | grep -c "check vs reference interpreter: ok"
