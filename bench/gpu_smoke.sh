#!/usr/bin/env bash
# One device call: every example run with --check (fused and --no-fuse), then
# `fusec bench` on the memory-bound graphs; a table last. Needs build/bin/fusec.
#   usage: bench/gpu_smoke.sh [graph-filter]
set -u
cd "$(dirname "$0")/.."
F=${FUSEC:-build/bin/fusec}
OUT=${OUT:-/tmp/fusec-out}
mkdir -p "$OUT"
export FUSEC_CACHE_DIR=${FUSEC_CACHE_DIR:-/tmp/fusec-cache}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
fails=0
for f in examples/*.json; do
  for mode in "" --no-fuse; do
    if timeout 300 "$F" run "$f" --check $mode > "$OUT/run.log" 2>&1; then
      echo "PASS $(basename "$f") $mode"
    else
      echo "FAIL $(basename "$f") $mode"; tail -n 8 "$OUT/run.log"; fails=$((fails + 1))
    fi
  done
done
for g in bench/graphs/*${1:-}*.json; do
  n=$(basename "$g" .json)
  timeout 300 "$F" bench "$g" --json --iters 50 > "$OUT/bench_$n.json" 2> "$OUT/bench_$n.err" \
    || { echo "BENCH FAIL $n"; tail -n 5 "$OUT/bench_$n.err"; }
done
python3 bench/summarize.py "$OUT"/bench_*.json
echo "example failures: $fails"
