#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct8
N=.devcarry/bin-t2/fusec; P=.devcarry/bin-t1/fusec
G=bench/graphs
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
for g in $G/decode_o_chain4_m32.json $G/decode_wide_chain4_m32.json test/lit/codegen/Inputs/decode33-ragged.json $G/llama_block_decode_b32.json; do
  r=$(timeout 90 $N run $g --check --gemm fusec 2>&1 | grep -E "check vs|rror" | cut -c1-100 | tr "\n" " "); echo "check $(basename $g .json): $r"; done
for rep in 1 2; do for bin in $P $N; do for g in decode_o_chain4_m32 decode_wide_chain4_m32; do timeout 60 $bin bench $G/$g.json --no-steps > /tmp/b.log 2>&1; echo "$(basename $(dirname $bin)) $g $(fused /tmp/b.log)"; done; done; done
mkdir -p build && ln -sfn ../.devcarry/bin-t2 build/bin
( time timeout 330 build/bin/gpu_e2e_test examples > $OUT/e2e.log 2>&1; echo "e2e rc $?" ) 2>&1 | grep -E "real|rc"
grep -E "^FAIL|passed," $OUT/e2e.log | tail -5
