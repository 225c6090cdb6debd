#!/bin/bash
# session w round 7: harness softmax_dim0 (vs torch.compile) and fusec bench on a2c882b (bin-w2)
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fcw7
for i in 1 2 3; do
  .devcarry/bin-w2/fusec bench bench/graphs/softmax_dim0.json --warmup-s 0.3 > /tmp/sm0.$i.log 2>&1
  echo "w2 $i $(awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' /tmp/sm0.$i.log) $(grep -m1 k0_max_sub /tmp/sm0.$i.log | awk '{print $(NF-2)}')"
done
cp /tmp/sm0.3.log $OUT/fusec-bench-softmax_dim0.log
timeout 300 python3 bench/harness.py --cases softmax_dim0 --no-max-autotune --fusec .devcarry/bin-w2/fusec --out $OUT/h > $OUT/harness.log 2>&1; tail -12 $OUT/harness.log
