#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct10
N=.devcarry/bin-t3/fusec; P=.devcarry/bin-t2/fusec; G=bench/graphs
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
for g in $G/decode_qkv_split_m32.json $G/llama_block_decode_b32.json test/lit/codegen/Inputs/qkv3-m32.json; do
  r=$(timeout 90 $N run $g --check 2>&1 | grep -E "check vs|rror" | cut -c1-90 | tr "\n" " "); echo "check $(basename $g .json): $r"; done
for rep in 1 2; do for bin in $P $N; do for g in decode_qkv_split_m32 llama_block_decode_b32; do timeout 60 $bin bench $G/$g.json --no-steps > /tmp/b.log 2>&1; echo "$(basename $(dirname $bin)) $g $(fused /tmp/b.log)"; done; done; done
timeout 90 $N bench $G/llama_block_decode_b32.json > $OUT/b32_steps.log 2>&1; grep -E "k1_matmul|whole" $OUT/b32_steps.log | head -3
