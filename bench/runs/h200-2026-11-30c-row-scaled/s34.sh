#!/usr/bin/env bash
# Device call 2 (2026-11-30, third session): why the row-scaled prologue made
# the 32-layer step slower: the b1 block per kernel, old against new and
# register/unroll variants of the new sibling kernels.
set -u
cd "$(dirname "$0")/.."
exec > >(tee $OUT/log.txt) 2>&1
mkdir -p build && ln -sfn ../.devcarry/bin build/bin
export FUSEC_CACHE_DIR=/tmp/fusec-cache
F=build/bin/fusec; O=build/bin/fusec_old
summ() { python3 -c '
import json,sys
b=json.load(sys.stdin); f=b["fused"]
st=" ".join("%s=%s/%s" % (s["name"].split("_")[0], s.get("median_us","-"), s.get("in_graph_us","-")) for s in f.get("steps",[]))
print("%s fused %.1f | %s" % (sys.argv[1], f["median_us"], st), flush=True)' "$1"; }
g=bench/graphs/llama_block_decode_b1.json
for r in 1 2; do
  timeout 60 $O bench $g --graph --iters 300 --json 2>/dev/null | summ "old"
  timeout 60 $F bench $g --graph --iters 300 --json 2>/dev/null | summ "new"
  for v in FUSEC_EXP_MINBLOCKS=8 FUSEC_EXP_MINBLOCKS=6 FUSEC_EXP_UNROLL=2 FUSEC_EXP_UNROLL=8; do
    env $v timeout 60 $F bench $g --graph --iters 300 --json 2>/dev/null | summ "new $v"
  done
done
for g in examples/decode_siblings.json examples/rms_norm_decode_linear.json; do
  timeout 60 $O bench $g --graph --iters 300 --json 2>/dev/null | summ "old $(basename $g)"
  timeout 60 $F bench $g --graph --iters 300 --json 2>/dev/null | summ "new $(basename $g)"
  FUSEC_EXP_UNROLL=2 timeout 60 $F bench $g --graph --iters 300 --json 2>/dev/null | summ "new u2 $(basename $g)"
done
