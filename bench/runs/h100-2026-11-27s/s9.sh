#!/bin/bash
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fc9
mkdir -p build && ln -sfn ../.devcarry/bin-s4 build/bin
F=.devcarry/bin-s4/fusec; B=.devcarry/bin-r3/fusec
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
b() { local lab=$1 g=$2; timeout 90 ${BIN:-$F} bench $g --no-steps > /tmp/b.log 2>&1; echo "$lab $(basename $g .json) $(fused /tmp/b.log)"; }
( time timeout 380 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed" $OUT/gpu_tests.log | tail -12
O=bench/graphs/decode_o_chain4_m32.json; W=bench/graphs/decode_wide_chain4_m32.json
for rep in 1 2 3; do BIN=$B b r3 $O; b s4 $O; done
for rep in 1 2; do BIN=$B b r3 $W; b s4 $W; done
for g in decode_o_residual_m32 decode_qkv_m32 decode_down_residual_m32 llama_block_decode_b32; do BIN=$B b r3 bench/graphs/$g.json; b s4 bench/graphs/$g.json; done
timeout 170 python3 bench/harness.py --cases decode_o_chain4_m32,decode_wide_chain4_m32 --no-max-autotune --fusec $F --out $OUT/h > $OUT/harness.log 2>&1; tail -6 $OUT/harness.log
