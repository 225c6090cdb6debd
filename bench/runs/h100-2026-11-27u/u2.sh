#!/bin/bash
# session u: how often is an invocation of a decode chain slow? (20 each, bin-t3)
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcu2
F=.devcarry/bin-t3/fusec; G=bench/graphs
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
for g in decode_wide_chain4_m32 decode_o_chain4_m32; do timeout 60 $F bench $G/$g.json --no-steps > /dev/null 2>&1; done
for i in $(seq 1 20); do
  for g in decode_wide_chain4_m32 decode_o_chain4_m32; do
    timeout 60 $F bench $G/$g.json --no-steps > /tmp/b.log 2>&1
    c=$(nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader | tr -d ' ')
    echo "$i $g $(fused /tmp/b.log) [$c]"
    cp /tmp/b.log $OUT/$g.$i.log
  done
done
