#!/usr/bin/env bash
# Device call 3 (2026-11-30, third session): the batch-1 decode attention
# with more buffers in flight a block (stages 3-6) against the split count.
set -u
cd "$(dirname "$0")/.."
exec > >(tee $OUT/log.txt) 2>&1
mkdir -p build && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
F=build/bin/fusec
med() { python3 -c 'import json,sys; b=json.load(sys.stdin); f=b["fused"]; print("%s %.2f (pred %.1f)" % (sys.argv[1], f["median_us"], f.get("predicted_us",0)), flush=True)' "$1"; }
for st in 3 4 5 6; do
  for sp in 0 6 8 11 13 16 22; do
    FUSEC_EXP_DECODE_STAGES=$st FUSEC_EXP_SPLITS=$sp timeout 40 $F bench bench/graphs/attention_decode_b1.json --iters 300 --no-steps --json 2>/dev/null | med "attn8192 st=$st sp=$sp"
    FUSEC_EXP_DECODE_STAGES=$st FUSEC_EXP_SPLITS=$sp timeout 40 $F bench bench/graphs/llama_block_decode_b1.json --graph --iters 300 --no-steps --json 2>/dev/null | med "block st=$st sp=$sp"
  done
done
FUSEC_EXP_DECODE_STAGES=6 FUSEC_GPU_TEST_FILTER=decode timeout 100 build/bin/gpu_e2e_test examples 2>&1 | grep -E "FAIL|random graphs:|examples" | tail -4
