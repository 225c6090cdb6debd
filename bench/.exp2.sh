set -u
F=build/bin/fusec
export FUSEC_CACHE_DIR=/tmp/fc
pct() { python3 -c "import json,sys; j=json.load(sys.stdin); f=j['fused']; print('%.1f us %.1f%%' % (f['median_us'], 100*f['bytes']/j['copy_bw_bytes_per_s']*1e6/f['median_us']))"; }
echo "softmax_dim0 cooperative: $($F bench bench/graphs/softmax_dim0.json --json --iters 30 2>&1 | pct)"
$F run examples/softmax_dim0.json --check 2>&1 | grep -E "check|error"
$F run examples/reductions.json --check 2>&1 | grep -E "check|error"
for g in gelu_bias cos cos_cos odd_chain_f32; do
  for u in 1 2 4 8; do for o in "" 1; do
    echo "$g unroll=$u oneshot=$o: $(FZX_PW_UNROLL=$u FZX_ONESHOT=$o $F bench bench/graphs/$g.json --json --iters 30 2>&1 | pct)"
  done; done
done
for g in softmax rms_norm layer_norm log_softmax add_rms_norm; do
  for e in 8 16 32; do for o in "" 1; do
    echo "$g elems=$e oneshot=$o: $(FZX_RELEMS=$e FZX_ONESHOT=$o $F bench bench/graphs/$g.json --json --iters 30 2>&1 | pct)"
  done; done
done
