#!/usr/bin/env bash
# `fusec bench --json` on the GPU. On a many-kernel example: each step's time
# in the graph (the first steps in a row less the steps before) is measured,
# not left over, and the steps' times add up to the whole graph's. On four
# chained decode layers (33.6 MB weights, a plan of 134 MB): a step timed
# alone rotates more sets of its weight than the plan's input sets. Exit 77
# without a GPU.
set -u
fusec=${1:-build/bin/fusec}
src=${2:-.}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
bench() {
  if ! "$fusec" bench "$1" --json --iters 20 --warmup-s 0 2>"$err"; then
    if grep -q "no NVIDIA driver\|no CUDA device" "$err"; then
      echo "SKIP: no GPU: $(head -1 "$err")" >&2
      exit 77
    fi
    cat "$err" >&2
    exit 1
  fi
}
# Without a cache directory bench and explain both predict from the profile's
# table (no copy rate measured by an earlier bench), so the planner columns match.
many=$(FUSEC_CACHE_DIR=off bench "$src/examples/reductions.json") || exit $?
chain=$(bench "$src/bench/graphs/decode_o_chain4_m1.json") || exit $?
profile=$(python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(j["profile"], j["arch"])' "$many")
explained=$(FUSEC_CACHE_DIR=off "$fusec" explain "$src/examples/reductions.json" --format json \
            --device "${profile% *}" --arch "${profile#* }") || exit 1
python3 -c '
import json, math, sys
many, chain = json.loads(sys.argv[1]), json.loads(sys.argv[2])
explained = json.loads(sys.argv[3])
for name in ("fused", "unfused"):
    plan = many[name]
    steps, whole = plan["steps"], plan["median_us"]
    assert len(steps) >= 3 and whole > 0, (name, plan)
    for s in steps:
        assert s["median_us"] > 0 and math.isfinite(s["in_graph_us"]), (name, s)
        assert s["in_graph_us"] < whole, (name, s, whole)
    # Each step but the last is its own prefix timing, not left at zero (event
    # times come in steps of about 0.5 us, so a short one may read 0).
    timed = sum(1 for s in steps[:-1] if s["in_graph_us"] != 0)
    assert 2 * timed >= len(steps) - 1, (name, steps)
    total = sum(s["in_graph_us"] for s in steps)
    assert abs(total - whole) <= 1e-6 * whole, (name, total, whole)
    print("%s: %d steps, whole graph %.1f us, in-graph times sum to %.1f"
          % (name, len(steps), whole, total))
assert len(many["unfused"]["steps"]) > len(many["fused"]["steps"])
# The planner column is what fusec explain predicts for the same kernel.
planned = {k["name"]: k["predicted_us"] for k in explained["kernels"]}
same = [s for s in many["fused"]["steps"] if s["name"] in planned]
kernels = [s for s in many["fused"]["steps"] if s["family"] != "copy"]
assert same and all(s["planner_us"] > 0 for s in kernels), many["fused"]
for s in same:
    assert abs(s["planner_us"] - planned[s["name"]]) <= 1e-6 * planned[s["name"]], (s, planned)
print("planner column matches fusec explain on %d kernels" % len(same))
# And the planner figure of the plan is the whole-graph prediction of explain.
whole = explained["total"]["predicted_us"]
assert abs(many["fused"]["planner_us"] - whole) <= 1e-6 * whole, (many["fused"]["planner_us"], whole)
print("planner total matches fusec explain: %.1f us" % whole)
for s in chain["fused"]["steps"]:
    assert s["input_sets"] > chain["input_sets"], (s, chain["input_sets"])
    print("%s alone: %d sets of its weight rotated (the plan: %d), %.1f us"
          % (s["name"], s["input_sets"], chain["input_sets"], s["median_us"]))
' "$many" "$chain" "$explained"
status=$?
[ $status -eq 0 ] || exit $status
# --autotune on a product given to cuBLASLt (decode Q/K/V, 32 rows, with
# --gemm cublaslt: on Hopper the plan's own choice is fusec's kernel): it
# times the heuristic's usable algorithms and keeps one ("rank N") in the
# tuning cache, which the next compile reads; the result still checks.
tune=$(mktemp -d)
trap 'rm -f "$err"; rm -rf "$tune"' EXIT
if ! FUSEC_CACHE_DIR="$tune" "$fusec" bench "$src/bench/graphs/decode_qkv_m32.json" --autotune \
     --gemm cublaslt --no-steps --iters 10 --warmup-s 0 >/dev/null 2>"$tune/log"; then
  cat "$tune/log" >&2
  exit 1
fi
grep "fusec: tuned cublaslt" -A1 "$tune/log"
python3 -c '
import json, sys
entries = json.load(open(sys.argv[1]))
text = json.dumps(entries)
assert "cublaslt sm_" in text and "rank " in text, entries
print("tuning cache: a cuBLASLt entry")
' "$tune/gemm-tuning.json" || exit 1
FUSEC_CACHE_DIR="$tune" "$fusec" run "$src/bench/graphs/decode_qkv_m32.json" --gemm cublaslt --check | grep "check vs reference interpreter: ok" || exit 1
# --weights: the parameters bound from their files (shards), the other inputs
# at random; a parameter missing from the files is an error naming it.
p=$src/test/lit/frontend/Inputs
for t in w b; do
  "$fusec" eval "$p/params-$t.json" -o "$tune/$t.safetensors" >/dev/null || exit 1
done
"$fusec" bench "$p/params.json" --weights "$tune/w.safetensors,$tune/b.safetensors" --json \
  --no-steps --iters 5 --warmup-s 0 > "$tune/bound.json" 2>"$tune/log" || { cat "$tune/log" >&2; exit 1; }
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["fused"]["median_us"] > 0 and j["unfused"]["median_us"] > 0, j
print("bench --weights: fused %.1f us" % j["fused"]["median_us"])
' "$tune/bound.json" || exit 1
if "$fusec" bench "$p/params.json" --weights "$tune/b.safetensors" --no-steps --iters 5 \
     --warmup-s 0 >/dev/null 2>"$tune/log" || ! grep -q "'w'" "$tune/log"; then
  echo "bench --weights without w: expected an error naming w:"; cat "$tune/log"; exit 1
fi
echo "bench --weights without w: $(head -1 "$tune/log")"
