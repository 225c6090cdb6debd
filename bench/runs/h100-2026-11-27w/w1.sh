#!/bin/bash
# session w round 1: pairs runner (generated pairs kernel variants vs micro) + main's fusec bench + GPU label on main (bin-w1 = 12d1ff9)
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcw1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader
( cd .devcarry/pm/softmax_dim0_variants/pairs && nvcc -O3 -arch=sm_90a -o /tmp/pr runner.cu 2>&1 | grep -i error ; /tmp/pr ) 2>&1 | tee $OUT/pairs_runner.log
for i in 1 2 3; do
  .devcarry/bin-w1/fusec bench bench/graphs/softmax_dim0.json --warmup-s 0.3 > /tmp/sm0.$i.log 2>&1
  echo "main $i $(awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' /tmp/sm0.$i.log)"
done
cp /tmp/sm0.3.log $OUT/
mkdir -p build && ln -sfn ../.devcarry/bin-w1 build/bin
( time timeout 400 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed" $OUT/gpu_tests.log | tail -12
