#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fc
F=.devcarry/bin-s1/fusec; B=.devcarry/bin-r3/fusec
O=bench/graphs/decode_o_chain4_m32.json
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
b() { local lab=$1 g=$2; shift 2
  env "$@" timeout 90 ${BIN:-$F} bench $g --no-steps > /tmp/b.log 2>&1; echo "$lab $(basename $g .json) $(fused /tmp/b.log)"; }
r=$(FUSEC_X_PDL0=1 FUSEC_X_EARLYN=16 timeout 60 $F run $O --check --gemm fusec 2>&1 | grep -iE "check" | cut -c1-120); echo "check pdl0 early16: $r"
for rep in 1 2 3; do
  BIN=$B b base $O X=1
  b wa-only $O FUSEC_X_NOEARLY=1
  b pdl0-e16 $O FUSEC_X_PDL0=1
  b pdl0-e8 $O FUSEC_X_PDL0=1 FUSEC_X_EARLYN=8
  b pdl0-e4 $O FUSEC_X_PDL0=1 FUSEC_X_EARLYN=4
  b e4 $O FUSEC_X_EARLYN=4
done
W=bench/graphs/decode_wide_chain4_m32.json
for rep in 1 2; do
  BIN=$B b base $W X=1
  b pdl0-e16 $W FUSEC_X_PDL0=1
  b pdl0-e8 $W FUSEC_X_PDL0=1 FUSEC_X_EARLYN=8
done
