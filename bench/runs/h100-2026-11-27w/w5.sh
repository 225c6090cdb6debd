#!/bin/bash
# session w round 5: the port in fusec (bin-wp, branch) vs main (bin-w1): runner, fusec bench alternating, e2e softmax cases
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcw5
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
( cd .devcarry/pm/softmax_dim0_variants/pairs && nvcc -O3 -arch=sm_90a -o /tmp/pr runner.cu 2>&1 | grep -i error; /tmp/pr ) 2>&1 | tee $OUT/pairs_runner5.log
for i in 1 2 3 4 5; do
  for b in w1 wp; do
    .devcarry/bin-$b/fusec bench bench/graphs/softmax_dim0.json --warmup-s 0.3 > /tmp/sm0.$b.$i.log 2>&1
    echo "$b $i $(awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' /tmp/sm0.$b.$i.log)"
  done
done
cp /tmp/sm0.wp.5.log /tmp/sm0.w1.5.log $OUT/
echo "== e2e softmax cases (bin-wp)"
FUSEC_GPU_TEST_FILTER="softmax" timeout 300 .devcarry/bin-wp/gpu_e2e_test examples 2>&1 | grep -v "cuBLASLt applied" | tail -3
