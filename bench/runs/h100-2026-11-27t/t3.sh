#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct3
N=.devcarry/bin-t1/fusec; B=.devcarry/bin-s4/fusec
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
b() { local lab=$1 bin=$2 g=$3; timeout 90 $bin bench $g --no-steps > /tmp/b.log 2>&1; echo "$lab $(basename $g .json) $(fused /tmp/b.log)"; }
G=bench/graphs
echo "== checks (new binary; arena poisoned)"
for g in $G/decode_o_chain4_m32.json $G/decode_wide_chain4_m32.json $G/decode_o_residual_m32.json $G/decode_down_residual_m32.json test/lit/codegen/Inputs/decode33-ragged.json .devcarry/d9x7680.json $G/decode_qkv_m32.json; do
  for gm in fusec auto; do r=$(timeout 60 $N run $g --check --gemm $gm 2>&1 | grep -E "check vs|rror" | cut -c1-110 | tr "\n" " "); echo "check $gm $(basename $g .json): $r"; done
done
for g in $G/llama_block_decode_b32.json $G/llama_block_decode_b1.json; do r=$(timeout 90 $N run $g --check 2>&1 | grep -E "check vs|rror" | cut -c1-110 | tr "\n" " "); echo "check auto $(basename $g .json): $r"; done
echo "== bench"
O=$G/decode_o_chain4_m32.json; W=$G/decode_wide_chain4_m32.json
for rep in 1 2 3; do b base $B $O; b new $N $O; done
for rep in 1 2; do b base $B $W; b new $N $W; done
for g in decode_o_residual_m32 decode_qkv_m32 decode_down_residual_m32 llama_block_decode_b32 llama_block_decode_b1; do b base $B $G/$g.json; b new $N $G/$g.json; done
echo "== sass"
for v in e8 e8f1; do cuobjdump -sass -fun k0_matmul_add .devcarry/t2/dg_$v > $OUT/sass_$v.txt 2>&1; echo "$v $(wc -l < $OUT/sass_$v.txt)"; done
