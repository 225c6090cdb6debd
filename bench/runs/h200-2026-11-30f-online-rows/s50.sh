#!/usr/bin/env bash
# Device call 5 (2026-11-30, sixth session): the rest of the GPU label on
# the final binary: ONNX test models, artifacts, bench --json.
set -u
cd "$(dirname "$0")/.."
mkdir -p build && rm -rf build/bin build/lib && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
t0=$(date +%s)
F=$PWD/.devcarry/bin/fusec
timeout 200 bash test/gpu/models_test.sh $F $PWD > $OUT/models.txt 2>&1; echo "gpu.models rc=$? ($(grep -c '^ok' $OUT/models.txt) ok, $(grep -c '^FAIL' $OUT/models.txt) FAIL) t=$(( $(date +%s)-t0 ))s"
timeout 200 bash test/gpu/artifact_test.sh $F $PWD > $OUT/artifact.txt 2>&1; echo "gpu.artifact rc=$? t=$(( $(date +%s)-t0 ))s"; grep -E "FAIL" $OUT/artifact.txt | head -3
timeout 150 bash test/gpu/bench_test.sh $F $PWD > $OUT/bench.txt 2>&1; echo "gpu.bench rc=$? t=$(( $(date +%s)-t0 ))s"; grep -E "FAIL" $OUT/bench.txt | head -3
