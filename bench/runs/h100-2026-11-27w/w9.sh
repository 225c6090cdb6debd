#!/bin/bash
# session w round 9: issue 5 at the capped clock: the product alone (fusec, cuBLASLt) against linear+bias+gelu+residual; harness for the three GEMM targets
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcw9
B=.devcarry/bin-w2/fusec
t() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' "$1"; }
for i in 1 2; do
  $B bench bench/graphs/linear_bias_gelu_residual.json --no-steps > /tmp/l.$i.log 2>&1; echo "linear_bias_gelu_residual fused $i: $(t /tmp/l.$i.log)"
  for g in fusec cublaslt; do
    $B bench .devcarry/gemm_8192x8192x4096.json --no-steps --gemm $g > /tmp/g.$g.$i.log 2>&1; echo "product alone ($g) $i: $(t /tmp/g.$g.$i.log)"
  done
done
cp /tmp/l.2.log /tmp/g.fusec.2.log /tmp/g.cublaslt.2.log $OUT/
timeout 420 python3 bench/harness.py --cases linear_bias_gelu_residual,swiglu_ffn,qkv_projection --no-max-autotune --budget-s 400 --fusec $B --out $OUT/h > $OUT/harness.log 2>&1
grep -E "^\| " $OUT/harness.log | head -6
