#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct9
N=.devcarry/bin-t2/fusec; G=bench/graphs
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,temperature.memory,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $OUT/clocks.csv 2>&1 &
SMI=$!
for rep in 1 2 3; do
  echo "$(date +%T.%N | cut -c1-12) check b32 start"; timeout 90 $N run $G/llama_block_decode_b32.json --check > /dev/null 2>&1
  for j in 1 2; do s=$(date +%T.%N | cut -c1-12); timeout 60 $N bench $G/decode_o_chain4_m32.json --no-steps > /tmp/b.log 2>&1; echo "$s .. $(date +%T.%N | cut -c1-12) bench o $(fused /tmp/b.log)"; done
done
for j in 1 2 3 4; do s=$(date +%T.%N | cut -c1-12); timeout 60 $N bench $G/decode_o_chain4_m32.json --no-steps > /tmp/b.log 2>&1; echo "$s .. $(date +%T.%N | cut -c1-12) bench o $(fused /tmp/b.log)"; done
kill $SMI
