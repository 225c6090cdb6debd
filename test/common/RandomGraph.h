//===- RandomGraph.h - random pointwise/broadcast/reduction graphs --------===//
//
// Test graphs for fusion: chains of elementwise ops over inputs that broadcast
// (biases along the last dim, per-row scales) or are read through a transpose
// of their last two dims, reductions over the last axis, the first, a middle
// one or everything, and the reduce -> broadcast -> pointwise shapes
// of normalizations; every dtype; odd sizes (1, 3, 1023, 4097). Values stay
// finite and comparisons only look at inputs, so results are continuous in
// the inputs and the fused kernels (fp32 intermediates) can be compared with the
// op-by-op reference within the dtype's tolerance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusec::test {

/// splitmix64: the same graphs on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int pick(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  template <typename T> const T &of(const std::vector<T> &v) { return v[pick(v.size())]; }
};

/// A graph in the JSON format, deterministic in `seed`. `maxElements` bounds
/// the largest tensor (the CPU interpreter checks every graph).
std::string randomGraph(uint64_t seed, int64_t maxElements = 1 << 21);

/// scaled_dot_product_attention over random shapes and semantics: bf16 or
/// f16; 1-2 batches of 1, 3 or 4 heads; 64-257 queries against 1-333 keys
/// (partial tiles, L != S); head dims 16-128; causal or not; no mask, an
/// additive mask over keys, or a boolean mask over queries x keys (rows
/// masked whole among them). Deterministic in `seed`.
std::string randomAttentionGraph(uint64_t seed);

/// Decode-sized attention (the decode form: fewer than 64 query rows a head)
/// over random shapes: 1-40 queries against 3-9000 keys; head dims 16-128;
/// grouped-query heads written as a repeat (1, 2, 4 or 8 query heads a K/V
/// head); K and V a cache joined with this step's 1 or 2 rows (a concat) or
/// not; no mask, an additive mask over keys, or causal. Deterministic in
/// `seed`.
std::string randomDecodeAttentionGraph(uint64_t seed);

/// A log-sum-exp over a product's rows (the streamed row statistics): h
/// [(2,) M, K] @ w^T or @ [K, N], bf16 or f16, M 1-300, N 1-8192, K 16-128;
/// the logits upcast to f32 or not, scaled, a bias added, columns past a
/// vocabulary size masked to -inf (all of them in some graphs); lse =
/// log(sum(exp(x - max))) + max as the output, with the max beside it, or
/// less a target logit, given or picked from the logits by a target index
/// (a cross-entropy loss), or that index's log-probability picked from x -
/// m - log(l) and negated (the same loss). Deterministic in `seed`.
std::string randomRowStatsGraph(uint64_t seed);

/// A matmul (bf16 or f16; odd and small M/N/K; batched or not; either operand
/// transposed; a weight shared by the batch) followed by a random elementwise
/// epilogue (bias, residual, per-row scale, gelu, silu, relu, tanh, sigmoid,
/// a second output, a cast to f32), and in some graphs a prologue of one or
/// two elementwise ops on A and/or B as stored (a scale along its rows, an
/// added tensor, silu, relu, or a cast from f32). Deterministic in `seed`. With
/// `libraryEpilogue`, the epilogue is one cuBLASLt expresses itself (a scale
/// by a constant, a residual and/or a bias, gelu(tanh)).
std::string randomMatmulGraph(uint64_t seed, bool libraryEpilogue = false);

/// gelu(x @ w^T + b) with x [m, k], w [n, k] in `dtype`: large enough for the
/// big tile configurations (every candidate is tested on it). With
/// `residual`, plus r [m, n].
std::string linearGeluGraph(int m, int n, int k, const std::string &dtype,
                            bool residual = false);

/// silu(x @ w_gate^T) * (x @ w_up^T), x [m, k], weights [n, k] in `dtype`:
/// SwiGLU's gate and up, which share a dual product on Hopper. With
/// `residual`, plus r [m, n] (a fifth tensor map: the TMA loads it).
std::string swigluGraph(int m, int n, int k, const std::string &dtype, bool residual = false);

/// x @ w_p^T for each width N_p of `ns`, x [m, k], weights [N_p, k] in
/// `dtype`, every product an output (Q/K/V: side by side on Hopper).
std::string siblingProductsGraph(int m, const std::vector<int> &ns, int k,
                                 const std::string &dtype);

/// softmax over the leading `reducedDims` dims of x (max, sub, exp, sum, div),
/// with the max as a second output: the outer-reduction kernels' case. With
/// `maskNegatives`, of where(x > 0, x, -inf) (a masked softmax).
std::string outerSoftmaxGraph(const std::vector<int64_t> &shape, int reducedDims,
                              const std::string &dtype, bool maskNegatives = false);

} // namespace fusec::test
