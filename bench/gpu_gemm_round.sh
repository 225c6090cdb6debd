#!/usr/bin/env bash
# One device call for the matmul family: the gpu e2e test (examples with
# --gemm fusec, random matmul + epilogue graphs), then the GEMM benchmarks:
# fusec's GEMM against cuBLASLt on the same graph (`--gemm fusec`: the fused
# plan uses fusec's kernel, the unfused plan runs the matmul through cuBLASLt)
# and the planner's own choice (`--gemm auto`). Expects binaries in build/bin
# (or .devcarry/bin, linked there). AUTOTUNE=1 tunes fusec's GEMMs first
# (`fusec bench --autotune`); GRAPHS and MODES narrow the run.
set -u
cd "$(dirname "$0")/.."
[ -d build/bin ] || { mkdir -p build && ln -sfn ../.devcarry/bin build/bin; }
export FUSEC_CACHE_DIR=${FUSEC_CACHE_DIR:-/tmp/fusec-cache}
OUT=${OUT:-/tmp/fusec-out}
mkdir -p "$OUT"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  timeout 500 build/bin/gpu_e2e_test > "$OUT/e2e.log" 2>&1
  echo "gpu e2e rc=$?"
  grep -E "^FAIL" "$OUT/e2e.log" | head -12
  tail -n 1 "$OUT/e2e.log"
fi
for g in ${GRAPHS:-gemm_8192x8192x8192 gemm_4096x11008x4096 linear_bias_gelu_residual decode_qkv_m1 decode_qkv_m32 decode_o_residual_m1 decode_o_residual_m32 decode_down_residual_m1 decode_down_residual_m32 decode_gate_up_m1 decode_gate_up_m32}; do
  for mode in ${MODES:-fusec auto}; do
    tune=""
    [ "${AUTOTUNE:-0}" = 1 ] && [ "$mode" = fusec ] && tune=--autotune
    timeout 300 build/bin/fusec bench "bench/graphs/$g.json" --gemm "$mode" $tune --json --iters 30 \
      > "$OUT/bench_${g}_$mode.json" 2> "$OUT/bench_${g}_$mode.err" ||
      { echo "BENCH FAIL $g $mode"; tail -n 3 "$OUT/bench_${g}_$mode.err"; }
  done
done
python3 bench/summarize.py "$OUT"/bench_*.json
grep -h "^fusec: tuned\|  -> " "$OUT"/bench_*.err 2>/dev/null | head -40
[ -f "$OUT/e2e.log" ] && tail -n 1 "$OUT/e2e.log"
