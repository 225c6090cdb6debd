#!/usr/bin/env bash
# Device call 1 (2026-11-30, third session, 1 x H200): the RMS norm as the
# dot-product kernel's prologue (row-scaled A). GPU checks, then the same
# graphs A/B against the binary before it (fusec_old), then the 32-layer step.
set -u
cd "$(dirname "$0")/.."
mkdir -p build && ln -sfn ../.devcarry/bin build/bin && ln -sfn ../.devcarry/lib build/lib
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
export FUSEC_CACHE_DIR=/tmp/fusec-cache
F=build/bin/fusec; O=build/bin/fusec_old
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
summ() { python3 -c '
import json,sys
b=json.load(sys.stdin); f=b["fused"]
st=" ".join("%s=%s/%s" % (s["name"].split("_")[0], s.get("median_us","-"), s.get("in_graph_us","-")) for s in f.get("steps",[]))
print("%s fused %.1f pred %.1f | %s" % (sys.argv[1], f["median_us"], f.get("predicted_us",0), st))' "$1"; }
for g in examples/rms_norm_decode_linear.json examples/decode_siblings.json test/lit/fusion/Inputs/rms_norm_f32_upcast.json bench/graphs/llama_block_decode_b1.json; do
  echo -n "$g: "; timeout 60 $F run $g --check 2>&1 | tail -1
done
for g in bench/graphs/llama_block_decode_b1.json examples/decode_siblings.json examples/rms_norm_decode_linear.json; do
  for r in 1 2; do
    timeout 60 $O bench $g --graph --iters 300 --json 2>/dev/null | summ "old $(basename $g)"
    timeout 60 $F bench $g --graph --iters 300 --json 2>/dev/null | summ "new $(basename $g)"
  done
done
timeout 400 python3 bench/llama_stack.py --layers 32 --out $OUT/stack 2>&1 | tail -12
W=$(ls /tmp/fusec-llama-stack/weights-*.safetensors | paste -sd,)
for b in $O $F $O $F; do
  timeout 100 $b bench /tmp/fusec-llama-stack/stack.json --weights $W --inputs /tmp/fusec-llama-stack/inputs.safetensors --graph --no-steps --json --iters 50 2>/dev/null | python3 -c 'import json,sys; b=json.load(sys.stdin); print("stack %s fused %.1f pred %.1f" % (sys.argv[1], b["fused"]["median_us"], b["fused"].get("predicted_us",0)))' $b
done
timeout 200 build/bin/gpu_e2e_test examples 2>&1 | grep -E "FAIL|random graphs:|examples" | tail -6
