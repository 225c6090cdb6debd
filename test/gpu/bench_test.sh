#!/usr/bin/env bash
# `fusec bench` on a many-kernel example: every step is timed alone and in
# the graph, and the in-graph times add up to the whole graph's (each is the
# first steps in a row less the steps before). Exit 77 without a GPU.
set -u
fusec=${1:-build/bin/fusec}
graph=${2:-examples/reductions.json}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if ! out=$("$fusec" bench "$graph" --json --iters 20 --warmup-s 0 2>"$err"); then
  if grep -q "no NVIDIA driver\|no CUDA device\|no GPU" "$err"; then
    echo "SKIP: no GPU: $(head -1 "$err")"
    exit 77
  fi
  cat "$err"
  exit 1
fi
python3 -c '
import json, math, sys
j = json.loads(sys.argv[1])
for name in ("fused", "unfused"):
    plan = j[name]
    steps = plan["steps"]
    whole = plan["median_us"]
    assert steps and whole > 0, (name, plan)
    for s in steps:
        assert s["median_us"] > 0 and math.isfinite(s["in_graph_us"]), (name, s)
    total = sum(s["in_graph_us"] for s in steps)
    assert abs(total - whole) <= 1e-6 * whole, (name, total, whole)
    alone = sum(s["median_us"] for s in steps)
    # In a row each launch overlaps the kernel before: not slower than alone.
    assert whole <= 1.05 * alone + 1.0, (name, whole, alone)
    print("%s: %d steps, whole graph %.1f us, in-graph times sum to %.1f, alone %.1f"
          % (name, len(steps), whole, total, alone))
assert len(j["unfused"]["steps"]) > len(j["fused"]["steps"])
' "$out"
