#!/bin/bash
# session u round: the wide online softmax + tail grid (bin-u1) against bin-t3
cd "$(dirname "$0")/.."
export FUSEC_CACHE_DIR=/tmp/fc
fused() { awk '/^fused/{f=1} /^unfused/{f=0} f && /whole graph/{print $(NF-1)}' $1; }
B=.devcarry
for g in bench/graphs/softmax_dim0.json examples/softmax_dim0.json; do
  timeout 60 $B/bin-u1/fusec run $g --check 2>&1 | tail -3
done
for i in 1 2 3; do
  for b in t3 u1; do
    timeout 60 $B/bin-$b/fusec bench bench/graphs/softmax_dim0.json --no-steps > /tmp/b.log 2>&1; echo "softmax_dim0 $b: $(fused /tmp/b.log) us"
  done
done
timeout 60 $B/bin-u1/fusec bench bench/graphs/softmax_dim0.json > /tmp/b.log 2>&1; grep -A12 "^fused" /tmp/b.log | head -14
for b in t3 u1; do
  timeout 60 $B/bin-$b/fusec bench examples/softmax_dim0.json --no-steps > /tmp/b.log 2>&1; echo "examples/softmax_dim0 $b: $(fused /tmp/b.log) us"
done
