#!/usr/bin/env bash
# One device call: the gpu test label, then the memory-bound benchmarks.
# Expects the binaries in build/bin (or .devcarry/bin, linked there).
set -u
cd "$(dirname "$0")/.."
[ -d build/bin ] || { mkdir -p build && ln -sfn ../.devcarry/bin build/bin; }
export FUSEC_CACHE_DIR=${FUSEC_CACHE_DIR:-/tmp/fusec-cache}
OUT=${OUT:-/tmp/fusec-out}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
time test/gpu/run_gpu_tests.sh > "$OUT/gpu_tests.log" 2>&1
grep -E "^FAIL|gpu test|passed," "$OUT/gpu_tests.log" | head -40
for g in bench/graphs/*${1:-}*.json; do
  n=$(basename "$g" .json)
  timeout 300 build/bin/fusec bench "$g" --json --iters 50 > "$OUT/bench_$n.json" 2> "$OUT/bench_$n.err" \
    || { echo "BENCH FAIL $n"; tail -n 5 "$OUT/bench_$n.err"; }
done
python3 bench/summarize.py "$OUT"/bench_*.json
