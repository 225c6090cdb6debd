#!/bin/bash
# session u: GPU label on ca7e0d5's binaries, then the no-GPU-independent checks
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcu5
mkdir -p build && ln -sfn ../.devcarry/bin-u5 build/bin
( time timeout 420 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed|matmuls|check vs" $OUT/gpu_tests.log | tail -14
timeout 60 .devcarry/bin-u5/fusec run bench/graphs/llama_block_decode_b32.json --check 2>&1 | grep -E "check vs|rror" | head -3
timeout 60 .devcarry/bin-u5/fusec run examples/reductions.json --check -o /dev/null 2>&1 | grep -E "check vs|rror" | head -4; ls -la /dev/null
ls -la /tmp/fcu5 | head -3; timeout 60 .devcarry/bin-u5/fusec run examples/softmax.json --check 2>&1 | grep -E "cache|check vs" | head -3
