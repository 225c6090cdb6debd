#!/usr/bin/env bash
# Device call 2 (2026-11-30, sixth session): the online sum of streamed rows.
# Correctness (the example and a vocabulary log-softmax against the
# interpreter), then old (5753f4c) / new (online, unroll 1) / u4 (online,
# 4 slots' loads in flight) on lse_retrieval and a 128256-word softmax.
set -u
cd "$(dirname "$0")/.."
mkdir -p build && rm -rf build/bin build/lib && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
B=.devcarry/bin
mkdir -p $OUT/ab
t0=$(date +%s)
for b in fusec fusec_u4; do
  for g in examples/long_row_softmax.json .devcarry/lsm_check.json examples/long_reductions.json examples/softmax.json; do
    echo -n "$b $g: "; timeout 120 $B/$b run $g --check 2>&1 | grep -E "check vs|rror" | awk '{print $4, $5, $6, $7, $NF}' | paste -sd'|'
  done
done
echo "t=$(( $(date +%s)-t0 ))s"
for r in 1 2; do
  for b in fusec_old fusec fusec_u4; do
    timeout 100 $B/$b bench bench/graphs/lse_retrieval.json --json --device h200 --warmup-s 0.3 --iters 40 > $OUT/ab/lse_${b}_$r.json 2>/dev/null
    python3 - $OUT/ab/lse_${b}_$r.json "lse $b" <<'PY'
import json,sys
j=json.load(open(sys.argv[1])); p=j["fused"]
print(sys.argv[2], "fused %.1f pred %.1f unfused %.1f |" % (p["median_us"], p.get("planner_us",0), j["unfused"]["median_us"]), " ".join("%s=%.1f/%.1f" % (s["name"][:12], s.get("median_us",0), s.get("predicted_us",0)) for s in p["steps"]))
PY
    timeout 100 $B/$b bench .devcarry/softmax_vocab.json --json --device h200 --warmup-s 0.3 --iters 40 --no-steps > $OUT/ab/smv_${b}_$r.json 2>/dev/null
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], "fused %.1f pred %.1f unfused %.1f" % (j["fused"]["median_us"], j["fused"].get("planner_us",0), j["unfused"]["median_us"]))' $OUT/ab/smv_${b}_$r.json "softmax_vocab $b"
  done
done
echo "t=$(( $(date +%s)-t0 ))s"
