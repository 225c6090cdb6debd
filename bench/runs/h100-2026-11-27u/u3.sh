#!/bin/bash
# session u: explain's predictions against measured steps, old (bin-t3) and new (bin-u2) pricing
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcu3
G=bench/graphs
for g in $G/llama_block_decode_b32.json $G/llama_block_decode_b1.json $G/decode_qkv_split_m32.json $G/decode_qkv_m32.json $G/decode_o_chain4_m32.json examples/llama_decoder_block.json; do
  for b in t3 u2; do
    timeout 120 .devcarry/bin-$b/fusec bench $g --warmup-s 0.2 > $OUT/$(basename $g .json).$b.log 2>&1
    echo "== $b $(basename $g)"; awk '/^fused/{f=1} /^unfused/{f=0} f' $OUT/$(basename $g .json).$b.log | grep -v "^  (\|^   \|^fused\|kernel  " | awk '{printf "%-28s alone %7s graph %7s planner %7s\n", $1, $(NF-6)=="" ? "" : $0 ~ /TFLOP/ ? $(NF-14) : $(NF-5), "", $NF}' | head -0
    awk '/^fused/{f=1} /^unfused/{f=0} f' $OUT/$(basename $g .json).$b.log | grep -E "^  k|whole graph|planner predicted" | cut -c1-140
  done
done
