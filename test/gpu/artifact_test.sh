#!/usr/bin/env bash
# Artifacts on the GPU: each graph compiled into model.fusec, run from the
# artifact alone (`fusec run model.fusec`: the runtime, no compile), and its
# outputs compared with the reference interpreter on the same random inputs
# (`fusec eval --expect`). The graphs cover generated kernels, cuBLASLt
# products, attention, streamed row statistics and a decoder block. Exit 77
# without a GPU.
set -u
fusec=${1:-build/bin/fusec}
src=${2:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for g in examples/softmax.json examples/rms_norm.json examples/linear_gelu_residual.json \
         examples/qkv_projection.json examples/attention_gqa.json examples/cross_entropy.json \
         examples/gqa_decode_attention.json examples/llama_decoder_block.json \
         bench/graphs/llama_block_decode_b1.json; do
  name=$(basename "$g" .json)
  if ! "$fusec" compile "$src/$g" -o "$work/$name.fusec" 2>"$work/err"; then
    echo "FAIL $g: compile -o: $(cat "$work/err")"; status=1; continue
  fi
  if ! "$fusec" run "$work/$name.fusec" --seed 3 -o "$work/$name.safetensors" \
       >"$work/out" 2>"$work/err"; then
    if grep -q "no NVIDIA driver\|no CUDA device" "$work/err"; then
      echo "SKIP: no GPU: $(head -1 "$work/err")" >&2
      exit 77
    fi
    echo "FAIL $g: run from the artifact: $(cat "$work/err")"; status=1; continue
  fi
  timing=$(grep "loaded" "$work/err")
  if ! "$fusec" eval "$src/$g" --seed 3 --expect "$work/$name.safetensors" >"$work/cmp" 2>&1; then
    echo "FAIL $g: the artifact's outputs differ from the reference:"; cat "$work/cmp"
    status=1; continue
  fi
  # The same artifact as one CUDA graph launch.
  if ! "$fusec" run "$work/$name.fusec" --graph --seed 3 -o "$work/$name.graph.safetensors" \
       >/dev/null 2>"$work/err" ||
     ! "$fusec" eval "$src/$g" --seed 3 --expect "$work/$name.graph.safetensors" >"$work/cmp" 2>&1; then
    echo "FAIL $g: replayed as a CUDA graph:"; cat "$work/err" "$work/cmp"
    status=1; continue
  fi
  echo "ok $g: $(ls -l "$work/$name.fusec" | awk '{print $5}') bytes; ${timing#fusec: }"
done

# Weights: embedded in the artifact (bound at load), or bound from their
# files by `fusec run --weights`; both give what the interpreter gives.
p=$src/test/lit/frontend/Inputs
for t in w b x; do
  "$fusec" eval "$p/params-$t.json" -o "$work/$t.safetensors" >/dev/null || status=1
done
"$fusec" compile "$p/params.json" -o "$work/emb.fusec" --embed-weights \
  --weights "$work/w.safetensors,$work/b.safetensors" 2>/dev/null || status=1
"$fusec" compile "$p/params.json" -o "$work/plain.fusec" 2>/dev/null || status=1
for run in "emb.fusec" "plain.fusec --weights $work/w.safetensors,$work/b.safetensors"; do
  # shellcheck disable=SC2086
  if "$fusec" run $work/$run --inputs "$work/x.safetensors" -o "$work/y.safetensors" \
       >/dev/null 2>"$work/err" &&
     "$fusec" eval "$p/params.json" --inputs "$work/x.safetensors" \
       --weights "$work/w.safetensors,$work/b.safetensors" --expect "$work/y.safetensors" \
       >"$work/cmp" 2>&1; then
    echo "ok weights: ${run%% *}: $(grep -o 'weights [0-9.]*' "$work/err")"
  else
    echo "FAIL weights: ${run%% *}:"; cat "$work/err" "$work/cmp" 2>/dev/null; status=1
  fi
done
# Sizes that vary: one artifact compiled with --max (every padded size), run
# at sequence lengths it was not compiled at, the sizes taken from the
# --inputs tensors, against onnxruntime's stored outputs (test/models).
m=$src/test/models
for model in llama gpt2; do
  if ! "$fusec" compile "$m/$model/model.onnx" --bind batch=2 --max sequence=64 --embed-weights \
       -o "$work/$model-max.fusec" 2>"$work/err"; then
    echo "FAIL $model --max: compile -o: $(tail -1 "$work/err")"; status=1; continue
  fi
  for s in 7 33; do
    for graph in "" --graph; do
      # shellcheck disable=SC2086
      if "$fusec" run "$work/$model-max.fusec" $graph --inputs "$m/$model/inputs_s$s.safetensors" \
           --expect "$m/$model/expected_s$s.safetensors" --tolerance 1e-4 >"$work/out" 2>"$work/err"; then
        echo "ok $model --max sequence=64 at $s ${graph:-(stream)}: $(grep -o 'rel error [^ ]*' "$work/out" | head -1)"
      else
        echo "FAIL $model --max sequence=64 at $s $graph:"; cat "$work/err" "$work/out"; status=1
      fi
    done
  done
done
exit $status
