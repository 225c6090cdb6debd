#!/bin/bash
# session w round 10: one compile per distinct kernel body (b305aba, bin-w3): first load of a 16-layer stack (empty cache) old vs new, --check on a 2-layer stack, GPU label
cd "$(dirname "$0")/.."
for b in w2 w3; do
  rm -rf /tmp/fc10-$b
  s=$EPOCHREALTIME; FUSEC_CACHE_DIR=/tmp/fc10-$b .devcarry/bin-$b/fusec run .devcarry/stack16.json > /tmp/r16.$b.log 2>&1; rc=$?; e=$EPOCHREALTIME
  echo "16-layer stack, empty cache, bin-$b: rc=$rc $(awk -v a=$s -v b=$e "BEGIN{printf \"%.2f\", b-a}") s, cache entries $(find /tmp/fc10-$b -name '*.cubin' | wc -l)"
  s=$EPOCHREALTIME; FUSEC_CACHE_DIR=/tmp/fc10-$b .devcarry/bin-$b/fusec run .devcarry/stack16.json > /dev/null 2>&1; e=$EPOCHREALTIME
  echo "  again (cache warm): $(awk -v a=$s -v b=$e "BEGIN{printf \"%.2f\", b-a}") s"
done
tail -3 /tmp/r16.w3.log
FUSEC_CACHE_DIR=/tmp/fc10-w3 timeout 300 .devcarry/bin-w3/fusec run .devcarry/stack2.json --check 2>&1 | tail -4
export FUSEC_CACHE_DIR=/tmp/fcw10
mkdir -p build && ln -sfn ../.devcarry/bin-w3 build/bin
( time timeout 420 test/gpu/run_gpu_tests.sh > $OUT/gpu_tests.log 2>&1 ) 2>&1 | grep real
grep -E "^FAIL|gpu test|passed,|failed" $OUT/gpu_tests.log | tail -12
