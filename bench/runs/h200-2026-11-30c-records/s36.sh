#!/usr/bin/env bash
# Device call 4 (2026-11-30, third session): the two records "to be measured
# again" (gelu_bias_1x4096, rms_norm_1x4096) and their 32-row siblings, three
# runs each, as bench/record_times.sh times them.
set -u
cd "$(dirname "$0")/.."
exec > >(tee $OUT/log.txt) 2>&1
mkdir -p build && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
for r in 1 2 3; do
  for n in gelu_bias_1x4096 rms_norm_1x4096 gelu_bias_32x4096 rms_norm_32x4096; do
    timeout 40 build/bin/fusec bench bench/graphs/$n.json --json --no-steps --device h200 --warmup-s 0.3 --iters 40 2>/dev/null | python3 -c '
import json,sys
j=json.load(sys.stdin)
print(json.dumps({"graph": sys.argv[1], "fused_us": j["fused"]["median_us"], "unfused_us": j["unfused"]["median_us"], "planner_fused_us": j["fused"]["planner_us"], "device": j["device"], "copy_bw": j["copy_bw_bytes_per_s"]}), flush=True)' $n
  done
done
