set -u
F=build/bin/fusec
export FUSEC_CACHE_DIR=/tmp/fc
for t in 32 64 128; do for p in 1 2 4; do
  echo -n "tile=$t persm=$p: "
  FZX_TILE=$t FZX_PERSM=$p $F bench bench/graphs/softmax_dim0.json --json --iters 20 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); f=j['fused']; print('%.1f us, %.1f%% of copy' % (f['median_us'], 100*f['bytes']/j['copy_bw_bytes_per_s']*1e6/f['median_us']))"
done; done
for g in gelu_bias cos cos_cos rms_norm add_rms_norm softmax log_softmax layer_norm odd_chain_f32 softmax_32x4096 rms_norm_1x4096; do
  $F bench bench/graphs/$g.json --json --iters 50 > $OUT/b_$g.json 2>$OUT/b_$g.err || tail -3 $OUT/b_$g.err
done
python3 bench/summarize.py $OUT/b_*.json
for f in examples/llama_decoder_block.json examples/softmax.json examples/gelu_bias.json examples/cos_cos.json examples/attention.json examples/swiglu_ffn.json; do $F run $f --check 2>&1 | grep -E "check|error"; done
