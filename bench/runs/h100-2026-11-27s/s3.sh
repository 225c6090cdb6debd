#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fc3
mkdir -p build && ln -sfn ../.devcarry/bin-s2 build/bin
F=.devcarry/bin-s2/fusec; B=.devcarry/bin-r3/fusec
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
b() { local lab=$1 g=$2; timeout 90 ${BIN:-$F} bench $g --no-steps > /tmp/b.log 2>&1; echo "$lab $(basename $g .json) $(fused /tmp/b.log)"; }
( time timeout 400 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed|decode " $OUT/gpu_tests.log | tail -24
O=bench/graphs/decode_o_chain4_m32.json; W=bench/graphs/decode_wide_chain4_m32.json
for rep in 1 2 3; do BIN=$B b base $O; b new $O; done
for rep in 1 2; do BIN=$B b base $W; b new $W; done
for g in bench/graphs/decode_o_residual_m32.json bench/graphs/llama_block_decode_b32.json; do BIN=$B b base $g; b new $g; done
timeout 150 python3 bench/harness.py --cases decode_o_chain4_m32 --no-max-autotune --fusec $F --out $OUT/h > $OUT/harness.log 2>&1; tail -6 $OUT/harness.log
