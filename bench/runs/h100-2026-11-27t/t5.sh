#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fct5
N=.devcarry/bin-t1/fusec; B=.devcarry/bin-s4/fusec
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
O=bench/graphs/decode_o_chain4_m32.json
for bin in $B $N; do timeout 90 $bin bench $O --no-steps > /tmp/b.log 2>&1; echo "$bin no-steps $(fused /tmp/b.log)"; done
timeout 120 $N bench $O --iters 50 --warmup-s 0.5 > $OUT/steps_new.log 2>&1; grep -E "k[0-9]_|whole" $OUT/steps_new.log | head -12
timeout 200 python3 bench/harness.py --cases decode_o_chain4_m32,decode_wide_chain4_m32 --no-max-autotune --fusec $N --out $OUT/h > $OUT/harness.log 2>&1; tail -4 $OUT/harness.log
for bin in $B $N; do timeout 90 $bin bench $O --no-steps > /tmp/b.log 2>&1; echo "$bin no-steps $(fused /tmp/b.log)"; done
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader
