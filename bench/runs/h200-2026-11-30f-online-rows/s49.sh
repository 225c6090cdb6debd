#!/usr/bin/env bash
# Device call 4 (2026-11-30, sixth session): the online pass with 4 slots'
# loads in flight (outputs pass as before) against 5753f4c, then the GPU
# label's end-to-end test (every example, the random graphs) on it.
set -u
cd "$(dirname "$0")/.."
mkdir -p build && rm -rf build/bin build/lib && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
B=.devcarry/bin
mkdir -p $OUT/ab
t0=$(date +%s)
for g in examples/long_row_softmax.json .devcarry/lsm_check.json; do
  echo -n "$g: "; timeout 120 $B/fusec run $g --check 2>&1 | grep -E "check vs|rror" | awk '{print $4, $5, $6, $7, $NF}' | paste -sd'|'
done
for b in fusec_old fusec; do
  timeout 100 $B/$b bench bench/graphs/lse_retrieval.json --json --device h200 --warmup-s 0.3 --iters 40 > $OUT/ab/lse_$b.json 2>/dev/null
  python3 - $OUT/ab/lse_$b.json "lse $b" <<'PY'
import json,sys
j=json.load(open(sys.argv[1])); p=j["fused"]
print(sys.argv[2], "fused %.1f pred %.1f unfused %.1f |" % (p["median_us"], p.get("planner_us",0), j["unfused"]["median_us"]), " ".join("%s=%.1f/%.1f" % (s["name"][:12], s.get("median_us",0), s.get("predicted_us",0)) for s in p["steps"]))
PY
  timeout 100 $B/$b bench .devcarry/softmax_vocab.json --json --device h200 --warmup-s 0.3 --iters 40 --no-steps > $OUT/ab/smv_$b.json 2>/dev/null
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], "fused %.1f pred %.1f unfused %.1f" % (j["fused"]["median_us"], j["fused"].get("planner_us",0), j["unfused"]["median_us"]))' $OUT/ab/smv_$b.json "softmax_vocab $b"
done
echo "t=$(( $(date +%s)-t0 ))s"
FUSEC_GPU_TEST_FILTER="examples/" stdbuf -oL -eL timeout 300 $B/gpu_e2e_test $PWD/examples > $OUT/e2e.txt 2>&1; echo "e2e examples rc=$?"
grep -E "FAIL|examples:|streamed|ran in" $OUT/e2e.txt | tail -8
echo "t=$(( $(date +%s)-t0 ))s"
FUSEC_GPU_TEST_FILTER="random" stdbuf -oL -eL timeout $(( 570 - ($(date +%s)-t0) )) $B/gpu_e2e_test $PWD/examples > $OUT/e2e_random.txt 2>&1; echo "e2e random rc=$?"
grep -E "FAIL|examples:|streamed|ran in" $OUT/e2e_random.txt | tail -8
echo "t=$(( $(date +%s)-t0 ))s"
