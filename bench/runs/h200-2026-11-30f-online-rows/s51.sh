#!/usr/bin/env bash
# Device call 5 (2026-11-30, sixth session): row vectors sized by what moves
# along the row (not a per-row output's dtype): A/B old (5753f4c) / prev
# (7d9cf8d, online) / new on lse_retrieval, the vocabulary softmax and greedy
# argmax; then the examples and random graphs, the ONNX models, artifacts.
set -u
cd "$(dirname "$0")/.."
mkdir -p build && rm -rf build/bin build/lib && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
B=.devcarry/bin; F=$PWD/$B/fusec
mkdir -p $OUT/ab
t0=$(date +%s)
for b in fusec_old fusec_prev fusec; do
  timeout 60 $B/$b bench bench/graphs/lse_retrieval.json --json --device h200 --warmup-s 0.2 --iters 30 > $OUT/ab/lse_$b.json 2>/dev/null
  python3 - $OUT/ab/lse_$b.json "lse $b" <<'PY'
import json,sys
j=json.load(open(sys.argv[1])); p=j["fused"]
print(sys.argv[2], "fused %.1f pred %.1f unfused %.1f |" % (p["median_us"], p.get("planner_us",0), j["unfused"]["median_us"]), " ".join("%s=%.1f/%.1f" % (s["name"][:12], s.get("median_us",0), s.get("predicted_us",0)) for s in p["steps"]))
PY
  for g in .devcarry/softmax_vocab.json examples/greedy_argmax.json; do
    timeout 60 $B/$b bench $g --json --device h200 --warmup-s 0.2 --iters 30 --no-steps > $OUT/ab/x.json 2>/dev/null
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], "fused %.1f pred %.1f unfused %.1f" % (j["fused"]["median_us"], j["fused"].get("planner_us",0), j["unfused"]["median_us"]))' $OUT/ab/x.json "$(basename $g) $b"
  done
done
echo "t=$(( $(date +%s)-t0 ))s"
FUSEC_GPU_TEST_FILTER="examples/" stdbuf -oL -eL timeout 150 $B/gpu_e2e_test $PWD/examples > $OUT/e2e.txt 2>&1; echo "e2e examples rc=$?"
grep -E "FAIL|examples:" $OUT/e2e.txt | tail -4
echo "t=$(( $(date +%s)-t0 ))s"
timeout 150 bash test/gpu/models_test.sh $F $PWD > $OUT/models.txt 2>&1; echo "gpu.models rc=$? ($(grep -c '^ok' $OUT/models.txt) ok) t=$(( $(date +%s)-t0 ))s"; grep FAIL $OUT/models.txt | head -3
timeout 120 bash test/gpu/artifact_test.sh $F $PWD > $OUT/artifact.txt 2>&1; echo "gpu.artifact rc=$? t=$(( $(date +%s)-t0 ))s"; grep FAIL $OUT/artifact.txt | head -3
FUSEC_GPU_TEST_FILTER="random" stdbuf -oL -eL timeout $(( 470 - ($(date +%s)-t0) )) $B/gpu_e2e_test $PWD/examples > $OUT/e2e_random.txt 2>&1; echo "e2e random rc=$?"
grep -E "FAIL|examples:" $OUT/e2e_random.txt | tail -4
echo "t=$(( $(date +%s)-t0 ))s"
