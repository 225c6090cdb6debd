#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct11
N=.devcarry/bin-t3/fusec; P=.devcarry/bin-t2/fusec; G=bench/graphs
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
for rep in 1 2; do for bin in $P $N; do for g in decode_qkv_split_m32 decode_o_chain4_m32 llama_block_decode_b32; do timeout 60 $bin bench $G/$g.json --no-steps > /tmp/b.log 2>&1; echo "$(basename $(dirname $bin)) $g $(fused /tmp/b.log)"; done; done; done
mkdir -p build && ln -sfn ../.devcarry/bin-t3 build/bin
( time timeout 300 build/bin/gpu_e2e_test examples > $OUT/e2e.log 2>&1; echo "e2e rc $?" ) 2>&1 | grep -E "real|rc"
grep -E "^FAIL|passed,|decode side" $OUT/e2e.log | tail -8
