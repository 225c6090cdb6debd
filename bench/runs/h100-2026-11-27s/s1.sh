#!/bin/bash
# session s round 1: early weights + signal, weights-as-A orientation (env toggles)
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fc
F=.devcarry/bin-s1/fusec; B=.devcarry/bin-r3/fusec
O=bench/graphs/decode_o_chain4_m32.json; W=bench/graphs/decode_wide_chain4_m32.json
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
echo "== checks (new, default toggles)"
for g in $O $W bench/graphs/decode_o_residual_m32.json bench/graphs/llama_block_decode_b32.json bench/graphs/llama_block_decode_b1.json test/lit/codegen/Inputs/decode33-ragged.json bench/graphs/decode_down_residual_m32.json; do
  r=$(timeout 60 $F run $g --check --gemm fusec 2>&1 | grep -iE "max|ok|fail|error" | tr '\n' ' ' | cut -c1-160); echo "$(basename $g): $r"
done
for v in "FUSEC_X_NOWA=1" "FUSEC_X_NOEARLY=1"; do
  r=$(env $v timeout 60 $F run $O --check --gemm fusec 2>&1 | grep -iE "max|ok|fail|error" | tr '\n' ' ' | cut -c1-160); echo "o chain $v: $r"
done
b() { # label envs... ; args graph
  local lab=$1 g=$2; shift 2
  env "$@" timeout 90 ${BIN:-$F} bench $g --no-steps > /tmp/b.log 2>&1; echo "$lab $(basename $g .json) $(fused /tmp/b.log)"
}
echo "== timing (us, fused whole graph)"
for rep in 1 2 3; do
  BIN=$B b base $O X=1
  b new $O X=1
  b early-only $O FUSEC_X_NOWA=1
  b wa-only $O FUSEC_X_NOEARLY=1
  [ $rep -le 2 ] && b early8 $O FUSEC_X_EARLYN=8
  [ $rep -le 1 ] && b neither $O FUSEC_X_NOWA=1 FUSEC_X_NOEARLY=1
done
for rep in 1 2; do
  BIN=$B b base $W X=1
  b new $W X=1
  b wa-only $W FUSEC_X_NOEARLY=1
done
for g in bench/graphs/llama_block_decode_b32.json bench/graphs/decode_qkv_m32.json bench/graphs/decode_down_residual_m32.json; do
  BIN=$B b base $g X=1; b new $g X=1
done
