#!/usr/bin/env bash
# Runs every fuzz target of a FUSEC_FUZZ build for SECONDS each on its seed
# corpus (examples/, the test models, test/fuzz/corpus/), new inputs kept in
# a scratch corpus. Fails on any crash, leak, sanitizer report, timeout (10 s
# an input) or an input using more than 2 GB.
#   test/fuzz/run.sh BUILD_DIR [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"
seconds="${2:-30}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() {
  local target="$1"; shift
  mkdir -p "$work/$target"
  echo "fuzz: $target for ${seconds}s"
  # -max_len 1 MB: the seeds go up to 2 MB (the models), mutated whole.
  "$build/bin/$target" "$work/$target" "$@" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=2200000 -print_final_stats=1 -artifact_prefix="$work/$target-" 2>&1 |
    grep -E "^(#[0-9]+ +(DONE|INITED)|==[0-9]+==|SUMMARY|stat::number_of_executed_units|.*(crash|leak|timeout|oom)-)" || true
  # A slow-unit-* file is no failure: an input past 10 s on a loaded machine
  # (it runs in well under a second alone); a timeout-* is one past 10 s.
  local found
  found=$(ls "$work/$target"-crash-* "$work/$target"-leak-* "$work/$target"-timeout-* \
    "$work/$target"-oom-* 2>/dev/null || true)
  if [ -n "$found" ]; then
    echo "fuzz: $target found a failing input:" $found
    cp $found "$build/" 2>/dev/null || true
    return 1
  fi
}
status=0
run fuzz-graph-json "$root/examples" "$root/bench/graphs" || status=1
run fuzz-compile "$root/examples" "$root/bench/graphs" "$root/test/fuzz/corpus/padded" || status=1
run fuzz-safetensors "$root/test/models/gpt2" "$root/test/models/bert" || status=1
run fuzz-onnx "$root/test/models/llama" "$root/test/lit/frontend/Inputs" "$root/test/fuzz/corpus/onnx" || status=1
run fuzz-cache-file "$root/test/fuzz/corpus/cache" || status=1
run fuzz-artifact "$root/test/fuzz/corpus/artifact" || status=1
exit $status
