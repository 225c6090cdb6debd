#!/bin/bash
# session w round 8: issue 3's memory-bound cases on a2c882b (bin-w2), harness vs torch.compile
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcw8
timeout 560 python3 bench/harness.py --cases gelu_bias,cos_cos,rms_norm,softmax,layer_norm,log_softmax,add_rms_norm,softmax_dim0,odd_chain_f32,softmax_1x4096,softmax_32x4096 --no-max-autotune --budget-s 500 --fusec .devcarry/bin-w2/fusec --out $OUT/h > $OUT/harness.log 2>&1
grep -E "^\| " $OUT/harness.log | head -20
grep -h "host cost" $OUT/h/logs/*.fusec.log 2>/dev/null | head -3
