#!/usr/bin/env bash
# Programs split over ranks (tensor parallel) through `fusec run --ranks N`:
# one GPU a rank, the ranks meeting through NCCL, the whole outputs checked
# against the reference interpreter of the whole graph (--check) or against
# the whole graph's outputs (--expect). Every count of ranks from 2 to the
# GPUs present, up to 4. Exit 77 with fewer than 2 GPUs, without a GPU, or
# without NCCL. Keep NCCL_NVLS_ENABLE=0 (no NVLink multicast on the GPU
# machines).
set -u
fusec=${1:-build/bin/fusec}
src=${2:-.}
export NCCL_NVLS_ENABLE=0
log=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$log" "$out"' EXIT
status=0
split="w_q=0,w_k=0,w_v=0,w_o=1,w_gate=0,w_up=0,w_down=1"
cache="cache_k=1,cache_v=1,k_new=1,v_new=1"
run() {  # label, then fusec's arguments
  local label=$1
  shift
  if "$fusec" run "$@" >"$log" 2>&1; then
    echo "ok $label: $(grep -o 'rel error [0-9.e+-]*\|max abs error [0-9.e+-]*' "$log" | head -1)"
    return 0
  fi
  if grep -q "no NVIDIA driver\|no CUDA device\|this machine has [01]$\|libnccl" "$log"; then
    echo "SKIP: $(grep 'error' "$log" | head -1)"
    exit 77
  fi
  echo "FAIL $label:"
  cat "$log"
  status=1
}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${gpus:-0}" -ge 2 ] || { echo "SKIP: fewer than 2 GPUs (${gpus:-0})"; exit 77; }
for ranks in 2 3 4; do
  [ "$ranks" -le "$gpus" ] || break
  [ "$ranks" -eq 3 ] && continue  # the example's dims are powers of two
  run "tp_llama_block, $ranks ranks" "$src/examples/tp_llama_block.json" --ranks "$ranks" --check
  # Each rank's plan as one CUDA graph launch, its collectives captured.
  run "tp_llama_block, $ranks ranks, CUDA graphs" "$src/examples/tp_llama_block.json" \
    --ranks "$ranks" --check --graph
  # The decode step with its caches split by heads and the new rows left
  # split: checked against the whole graph's outputs on one GPU.
  "$fusec" run "$src/test/lit/cli/Inputs/tp_decode_block.json" --seed 4 -o "$out/whole.safetensors" \
    >/dev/null 2>&1 || { echo "FAIL: the whole decode step on one GPU"; status=1; }
  run "tp_decode_block, $ranks ranks" "$src/test/lit/cli/Inputs/tp_decode_block.json" --seed 4 \
    --ranks "$ranks" --shard "$split,$cache" --expect "$out/whole.safetensors" --tolerance 1e-4
  # bf16 weights at decode size: the bench block, against the interpreter.
  run "llama_block_decode_b1, $ranks ranks" "$src/bench/graphs/llama_block_decode_b1.json" \
    --ranks "$ranks" --shard "$split,$cache" --check
done
# All-reduces from 1 element to 64 MB: a linear whose contraction is split
# leaves each rank a partial sum. Up to 512 KB fusec's one-shot kernel over
# peer memory runs them (16-byte vectors where the size allows, elements
# where it does not), past that NCCL; FUSEC_PEER_COLLECTIVES=0 sends every
# one through NCCL. Launch by launch and as CUDA graph replays.
# The all-reduce at the start of the row kernel after it (residual add and
# RMSNorm): one row, 32 rows (32 blocks), short rows two a block; then the
# same through NCCL in place where the regions are refused.
for b in M=1,N=8192 M=32,N=4096 M=4,N=100; do
  g="$src/test/lit/cli/Inputs/row_parallel_norm.json"
  run "row-parallel + RMSNorm ($b), 2 ranks" "$g" --bind "$b" --ranks 2 --check
  run "row-parallel + RMSNorm ($b), 2 ranks, CUDA graphs" "$g" --bind "$b" --ranks 2 --check --graph
  FUSEC_PEER_COLLECTIVES=0 run "row-parallel + RMSNorm ($b), 2 ranks, NCCL only" "$g" --bind "$b" \
    --ranks 2 --check
done
# Three decode layers: a one-shot exchange per block reused call after call
# within one run (the parity halves of plan/PeerRegion.h), by row kernels and
# the last standalone all-reduce alike.
if python3 "$src/bench/make_stack.py" 3 "$out/stack3.json" --layer llama_block_decode_b1 \
    >/dev/null 2>&1; then
  globs="*w_q=0,*w_k=0,*w_v=0,*w_o=1,*w_gate=0,*w_up=0,*w_down=1,*cache_k=1,*cache_v=1,*k_new=1,*v_new=1"
  run "3 decode layers, 2 ranks" "$out/stack3.json" --ranks 2 --shard "$globs" --check
  run "3 decode layers, 2 ranks, CUDA graphs" "$out/stack3.json" --ranks 2 --shard "$globs" \
    --check --graph
fi
for n in 1 7 4096 262144 262152 33554432; do
  cat >"$out/ar_$n.json" <<GRAPH
{"fusec": 1, "name": "row_parallel_$n",
 "description": "y = h @ w^T, the contraction split over ranks: an all-reduce of $n elements",
 "inputs": [{"name": "h", "dtype": "bf16", "shape": [1, 16], "shard": 1},
            {"name": "w", "dtype": "bf16", "shape": [$n, 16], "shard": 1}],
 "nodes": [{"name": "y", "op": "linear", "inputs": ["h", "w"]}],
 "outputs": ["y"]}
GRAPH
  run "all-reduce of $n bf16, 2 ranks" "$out/ar_$n.json" --ranks 2 --check
  run "all-reduce of $n bf16, 2 ranks, CUDA graphs" "$out/ar_$n.json" --ranks 2 --check --graph
  FUSEC_PEER_COLLECTIVES=0 run "all-reduce of $n bf16, 2 ranks, NCCL only" "$out/ar_$n.json" \
    --ranks 2 --check
done
exit $status
