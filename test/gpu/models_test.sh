#!/usr/bin/env bash
# The ONNX test models (test/models: GPT-2, Llama, BERT, ViT) through `fusec
# run` on the GPU against onnxruntime's stored outputs, at each stored size
# (sequence lengths 7 and 33, or the ViT's batches 1 and 3), the sizes taken
# from the inputs; and the Llama, GPT-2 and BERT compiled at a padded sequence
# length (--max sequence=64: 8 for 7, 48 for 33). Exit 77 without a GPU.
set -u
fusec=${1:-build/bin/fusec}
src=${2:-.}
tolerance=${3:-1e-3}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
check() {  # inputs, then extra flags
  local inputs=$1
  shift
  dir=$(dirname "$inputs")
  size=$(basename "$inputs" .safetensors)
  size=${size#inputs_}
  label="$(basename "$dir") $size $*"
  if "$fusec" run "$dir/model.onnx" --inputs "$inputs" --expect "$dir/expected_$size.safetensors" \
       --tolerance "$tolerance" "$@" >"$log" 2>&1; then
    echo "ok $label: $(grep -o 'rel error [0-9.e+-]*' "$log" | head -1)"
  elif grep -q "no NVIDIA driver\|no CUDA device" "$log"; then
    echo "SKIP: no GPU: $(head -1 "$log")"
    exit 77
  else
    echo "FAIL $label:"; cat "$log"; status=1
  fi
}
for inputs in "$src"/test/models/*/inputs_*.safetensors; do
  check "$inputs"
done
for inputs in "$src"/test/models/{llama,gpt2,bert}/inputs_*.safetensors; do
  check "$inputs" --max sequence=64
done
exit $status
