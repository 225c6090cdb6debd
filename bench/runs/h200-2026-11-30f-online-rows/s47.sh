#!/usr/bin/env bash
# Device call 1 (2026-11-30, sixth session, 1 x H200): the GPU label on
# 5753f4c (pick-early, GatherElements, the ONNX losses), the fifth
# session's ONNX inputs through `fusec run`, then per-step times of the
# graphs whose predictions are known off (fused and unfused plans).
set -u
cd "$(dirname "$0")/.."
mkdir -p build && rm -rf build/bin build/lib && ln -sfn ../.devcarry/bin build/bin && ln -sfn ../.devcarry/lib build/lib
export LD_LIBRARY_PATH=$PWD/build/lib:${LD_LIBRARY_PATH:-}
export FUSEC_CACHE_DIR=/tmp/fusec-cache
F=build/bin/fusec
S=$PWD
mkdir -p $OUT/steps
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
echo "== e2e (random row stats)"; FUSEC_GPU_TEST_FILTER="random row stats" timeout 200 build/bin/gpu_e2e_test $S/examples 2>&1 | tail -3
echo "== onnx inputs"
I=test/lit/frontend/Inputs
timeout 60 $F run $I/gather-elements.onnx --inputs $I/gather-elements-inputs.safetensors --expect $I/gather-elements-expected.safetensors 2>&1 | tail -2
timeout 60 $F run $I/gather-elements.onnx --inputs $I/gather-elements-inputs.safetensors --check 2>&1 | grep -i "check\|error" | tail -3
timeout 60 $F run $I/gather-elements-names.onnx --inputs $I/gather-elements-names-inputs.safetensors --check 2>&1 | grep -i "check\|error" | tail -3
timeout 60 $F run $I/cross-entropy.onnx --inputs $I/cross-entropy-inputs.safetensors --check 2>&1 | grep -i "check\|error" | tail -6
timeout 60 $F run examples/cross_entropy_log_softmax.json --check 2>&1 | grep -i "check\|error" | tail -3
echo "== known-off graphs, steps (t=$(( $(date +%s)-t0 ))s)"
for n in lse_retrieval decode_fc_gelu_m1 decode_o_chain4_m1 decode_swiglu_down_m1 decode_qkv_split_m1 decode_qkv_split_m32 attention_decode_b1 attention_decode_b32 cross_entropy_gpt2 cross_entropy_gpt2_labels; do
  timeout 90 $F bench bench/graphs/$n.json --json --device h200 --warmup-s 0.3 --iters 40 > $OUT/steps/$n.json 2>/dev/null
  python3 - $OUT/steps/$n.json $n <<'PY'
import json,sys
try: j=json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], "no json", e); sys.exit()
for k in ("fused","unfused"):
  p=j[k]; print("%s %s %.1f (pred %.1f):" % (sys.argv[2], k, p["median_us"], p.get("planner_us",0)), " ".join("%s[%s]=%.1f/%.1f" % (s["name"][:24], s.get("family","?"), s.get("median_us",0), s.get("predicted_us",0)) for s in p.get("steps",[])))
PY
done
echo "== bench cross_entropy_log_softmax example (t=$(( $(date +%s)-t0 ))s)"
timeout 90 $F bench examples/cross_entropy_log_softmax.json --json --warmup-s 0.3 --iters 40 > $OUT/steps/ce_log_softmax.json 2>/dev/null; python3 -c 'import json;j=json.load(open("'$OUT'/steps/ce_log_softmax.json"));print("ce_log_softmax fused", j["fused"]["median_us"], "unfused", j["unfused"]["median_us"])'
echo "== GPU label (t=$(( $(date +%s)-t0 ))s)"
timeout 120 build/bin/gpu_cublaslt_test 2>&1 | tail -1; echo "cublaslt rc=$?"
timeout 400 build/bin/gpu_e2e_test $S/examples > $OUT/e2e.txt 2>&1; echo "e2e rc=$?"; grep -E "FAIL|examples:" $OUT/e2e.txt | tail -5
echo "t=$(( $(date +%s)-t0 ))s"
