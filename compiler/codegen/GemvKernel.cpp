//===- GemvKernel.cpp - the dot-product kernel (M <= 8) and its K loop ----===//
//
// The dot-product kernels (1-8 rows of A: GemmKernel.cpp's GEMV and
// SiblingGemv.cpp) are bound by how many weight bytes are in flight. Written
// as one loop of "load a vector, use it", ptxas keeps about two 16-byte
// loads in flight per lane (32 registers in all), too few for a layer in a
// stream of layers to match a plain read of the same bytes in the same
// pattern (docs/matmul.md, "What a decode layer costs in a stream"). Where
// a lane's whole share of K is at most 16 vectors (K <= 4096 for one weight)
// and the grid is resident at once, every lane loads all of its weight
// vectors as raw 16-byte registers before it uses the first: the whole
// layer's reads are issued at the start.
//
// Longer K and several weights keep the plain loop, which is faster there:
// batches of loads run dry at the end of every batch, and a ring refilled
// step by step takes 65-142 registers, half the occupancy.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/cost/CostModel.h"

#include <algorithm>

namespace fusec::codegen::detail {
namespace {
std::string str(int64_t v) { return std::to_string(v); }

/// At most this many raw 16-byte vectors per lane (64 registers): the
/// measured read pattern (bench/micro/stream_read.cu, rows) keeps 16.
constexpr int kVectorsInFlight = 16;
/// Warps an SM holds at the registers the raw vectors take (42-50
/// measured, allocated as 48-56: five blocks of 8 warps). A Q/K/V weight
/// of 6144 rows, a warp each, is more than that: with its loads all in
/// flight it runs slower, so it keeps the plain loop.
constexpr int64_t kWarpsPerSmInFlight = 40;
} // namespace

bool gemvAllInFlight(int64_t k, int64_t laneStep, int weights, int64_t warps, int smCount) {
  return k % laneStep == 0 && (k / laneStep) * weights <= kVectorsInFlight && smCount > 0 &&
         warps <= kWarpsPerSmInFlight * smCount;
}

std::string gemvPlainLoop(const GemvLoop &l, int vectors, const std::string &loads) {
  const std::string &in = l.indent;
  return in + "#pragma unroll 4\n" + in + "for (int k = " + l.kStart + "; k < " + str(l.k) +
         "; k += " + str(l.laneStep) + ") {\n" + in + "  float w[" + str(vectors) + "][8];\n" +
         loads + l.body + in + "}\n";
}

std::string gemvWeightLoop(const GemvLoop &l) {
  const int J = static_cast<int>(l.weights.size());
  const std::string &in = l.indent, S = str(l.laneStep);
  auto loads = [&](const std::string &ind, bool raw) {
    std::string t;
    for (int j = 0; j < J; ++j)
      t += raw ? ind + "fz_wr[u][" + str(j) + "] = fz_load_raw<" + l.elem + ", 8>(" +
                     l.weights[j].first + ", " + l.weights[j].second + ");\n"
               : ind + "fz_load<" + l.elem + ", 8>(" + l.weights[j].first + ", " +
                     l.weights[j].second + ", w[" + str(j) + "]);\n";
    return t;
  };
  if (!l.allInFlight)
    return gemvPlainLoop(l, J, loads(in + "  ", false));
  std::string s;
  const std::string U = str(l.k / l.laneStep);
  s += in + "// all " + U + " of this lane's steps' weights in flight before the first is used\n";
  s += in + "fz_pack<" + l.elem + ", 8> fz_wr[" + U + "][" + str(J) + "];\n";
  s += in + "#pragma unroll\n" + in + "for (int u = 0; u < " + U + "; ++u) {\n";
  s += in + "  const int k = " + l.kStart + " + u * " + S + ";\n" + loads(in + "  ", true);
  s += in + "}\n";
  s += in + "#pragma unroll\n" + in + "for (int u = 0; u < " + U + "; ++u) {\n";
  s += in + "  const int k = " + l.kStart + " + u * " + S + ";\n";
  s += in + "  float w[" + str(J) + "][8];\n";
  s += in + "  #pragma unroll\n" + in + "  for (int j = 0; j < " + str(J) +
       "; ++j) fz_unpack_raw(fz_wr[u][j], w[j]);\n";
  return s + l.body + in + "}\n";
}

/// M <= 8 (decode): each warp streams `gemvCols` weight rows (B is
/// K-contiguous: a linear layer's weight) 16 bytes per lane per step, dots
/// them with every row of A (read through L1: every warp reads the same A),
/// folds the lanes with shuffles, and lane (m, c) applies the epilogue to
/// its element. No shared memory, no tensor cores: 1-8 rows would leave
/// them idle, and this is bound by the weight bytes.
int64_t GemmGen::gemvBlocks() const {
  const int64_t perBlock = int64_t(cfg.gemvCols) * cfg.gemvWarps * gemvRowsPerWarpStep();
  return (shape.n + perBlock - 1) / perBlock;
}

int GemmGen::gemvRowsPerWarpStep() const {
  // Short rows (attention scores: K = the head dim) would idle most lanes: a
  // row then takes L lanes (16 bytes each per step) and a warp 32 / L rows at
  // once, as long as the L lanes of a row can hand out its M x C sums.
  int L = 32;
  while (L > 1 && (L / 2) * 8 >= shape.k && shape.m * cfg.gemvCols <= L / 2)
    L /= 2;
  return 32 / L;
}

bool GemmGen::gemvStagesA() const {
  return a.computed && shape.m * shape.k * 2 <= kGemvStageBytes;
}

KernelText GemmGen::gemvSource(int smCount) {
  int C = cfg.gemvCols, W = cfg.gemvWarps;
  int64_t M = shape.m, N = shape.n, K = shape.k;
  int R = gemvRowsPerWarpStep(), L = 32 / R;
  KernelText text;
  text.qualifiers = "__launch_bounds__(" + str(W * 32) + ")";
  text.params = parameters(fusion);
  std::string s;
  s += "  const int lane = threadIdx.x % 32, fz_l = lane % " + str(L) + ";\n";
  s += "  const int fz_n0 = (blockIdx.x * " + str(W) + " + threadIdx.x / 32) * " + str(C * R) +
       " + lane / " + str(L) + ";\n";
  // No early exit: the lanes of a warp may hold different rows, and all of
  // them take part in the shuffles. Rows past N read row N - 1, store nothing.
  s += "  const int fz_b = blockIdx.y;  // one matrix of the batch per grid row\n";
  // A computed by the prologue: once per block into shared memory, where
  // every warp reads it (computed per warp, the prologue's inputs would be
  // read once per weight row: as many bytes as the weights, or more).
  bool staged = gemvStagesA();
  text.staticShared = staged;
  if (staged) {
    s += "  __shared__ __align__(16) " + elem + " fz_Astage[" + str(M * K) + "];\n";
    s += "  for (int fz_c = threadIdx.x; fz_c < " + str(M * K / 8) + "; fz_c += " + str(W * 32) +
         ") {\n";
    s += "    const int m = fz_c / " + str(K / 8) + ", k = (fz_c % " + str(K / 8) + ") * 8;\n";
    s += "    float x[8];\n" + operandVector(a, "m", "k", false, "x", "    ");
    s += "    fz_store<" + elem + ", 8>(fz_Astage, m * " + str(K) + " + k, x);\n  }\n";
    s += "  __syncthreads();\n";
  }
  // This lane's output element (lane m * C + c of a row's segment takes
  // element (m, c)) and the epilogue's inputs, read now: they do not wait
  // for the products, so their latency is not added at the kernel's end.
  s += "  const int fz_em = min(fz_l / " + str(C) + ", " + str(M - 1) + ");\n";
  s += "  const int fz_en = fz_l < " + str(M * C) + " ? fz_n0 + (fz_l % " + str(C) + ") * " +
       str(R) + " : " + str(N) + ";  // " + str(N) + ": no element\n";
  s += "  const int fz_enc = min(fz_en, " + str(N - 1) + ");\n";
  std::string prefetch, epilogue = scalarEpilogue(&prefetch);
  s += prefetch;
  s += "  float acc[" + str(M) + "][" + str(C) + "];\n";
  s += "  #pragma unroll\n  for (int m = 0; m < " + str(M) + "; ++m)\n    #pragma unroll\n"
       "    for (int c = 0; c < " + str(C) + "; ++c) acc[m][c] = 0.f;\n";
  // One step: the rows of A (8 elements at k) against the weights' vectors.
  std::string body = "    #pragma unroll\n    for (int m = 0; m < " + str(M) + "; ++m) {\n";
  body += "      float x[8];\n";
  if (staged)
    body += "      fz_load_shared<" + elem + ", 8>(fz_Astage + m * " + str(K) + " + k, x);\n";
  else
    body += operandVector(a, "m", "k", false, "x", "      ");
  body += "      #pragma unroll\n      for (int c = 0; c < " + str(C) + "; ++c)\n"
          "        #pragma unroll\n        for (int i = 0; i < 8; ++i) acc[m][c] = fmaf(x[i], "
          "w[c][i], acc[m][c]);\n    }\n";
  // Every lane of a row's segment ends with every sum.
  std::string tail = "  float fz_v = 0.f;\n";
  tail += "  #pragma unroll\n  for (int m = 0; m < " + str(M) + "; ++m)\n    #pragma unroll\n"
          "    for (int c = 0; c < " + str(C) + "; ++c) {\n"
          "      const float t = fz_warp_reduce<" + str(L) + ">(acc[m][c], fz_sum_op());\n"
          "      if (fz_l == m * " + str(C) + " + c) fz_v = t;\n"
          "    }\n";
  tail += "  if (fz_en < " + str(N) + ") {\n" + epilogue + "  }\n";
  GemvLoop loop;
  loop.k = K;
  loop.laneStep = L * 8;
  loop.kStart = "fz_l * 8";
  loop.elem = elem;
  loop.indent = "  ";
  loop.body = body;
  if (b.computed) {  // the prologue computes each weight vector as it is loaded
    std::string loads = "    #pragma unroll\n    for (int c = 0; c < " + str(C) + "; ++c) {\n";
    loads += "      const int n = min(fz_n0 + c * " + str(R) + ", " + str(N - 1) + ");\n";
    loads += operandVector(b, "k", "n", true, "w[c]", "      ") + "    }\n";
    text.body = s + gemvPlainLoop(loop, C, loads) + tail;
    return text;
  }
  const int64_t warps = gemvBlocks() * W * std::max<int64_t>(shape.batch, 1);
  loop.allInFlight = gemvAllInFlight(K, L * 8, C, warps, smCount);
  for (int c = 0; c < C; ++c) {
    std::string n = "fz_wn" + str(c);
    s += "  const int " + n + " = min(fz_n0 + " + str(c * R) + ", " + str(N - 1) + ");\n";
    loop.weights.push_back({b.ptr, offsetExpr(b, "fz_b", "k", n)});
  }
  text.body = s + gemvWeightLoop(loop) + tail;
  return text;
}

} // namespace fusec::codegen::detail
