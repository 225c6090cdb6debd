#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fc6
F=.devcarry/bin-s3/fusec; B=.devcarry/bin-s2/fusec
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
b() { local lab=$1 g=$2; timeout 90 ${BIN:-$F} bench $g --no-steps > /tmp/b.log 2>&1; echo "$lab $(basename $g .json) $(fused /tmp/b.log)"; }
O=bench/graphs/decode_o_chain4_m32.json; W=bench/graphs/decode_wide_chain4_m32.json
for g in $O $W test/lit/codegen/Inputs/decode33-ragged.json bench/graphs/llama_block_decode_b32.json bench/graphs/decode_down_residual_m32.json; do
  r=$(timeout 60 $F run $g --check --gemm fusec 2>&1 | grep -E "check vs" | cut -c1-110 | tr '\n' ' '); echo "$(basename $g): $r"
done
for rep in 1 2 3; do BIN=$B b s2 $O; b s3 $O; done
for rep in 1 2; do BIN=$B b s2 $W; b s3 $W; done
for g in bench/graphs/decode_o_residual_m32.json bench/graphs/decode_down_residual_m32.json; do BIN=$B b s2 $g; b s3 $g; done
