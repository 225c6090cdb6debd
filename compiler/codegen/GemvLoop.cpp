//===- GemvLoop.cpp - the dot-product kernels' walk along K ---------------===//
//
// The dot-product kernels (1-8 rows of A: GemmKernel.cpp's GEMV and
// SiblingGemv.cpp) are bound by how many weight bytes are in flight. Written
// as one loop of "load a vector, use it", ptxas keeps about two 16-byte
// loads in flight per lane (32 registers in all), and a 32 MB layer in a
// stream of layers took 14.4 us where a plain read of the same bytes in the
// same pattern takes 13.3 (bench/NOTES.md, session p). Where a lane's whole
// share of K is at most 16 vectors (K <= 4096 for one weight) and the grid
// is resident at once, every lane loads all of its weight vectors as raw
// 16-byte registers before it uses the first: the whole layer's reads are
// issued at the start (o projection in a stream 14.4 -> 13.6 us).
//
// Measured and not kept: the same batches for longer K or several weights
// (the lanes' loads ran dry at the end of every batch: down projection 45.3
// -> 62.4 us), and a ring refilled step by step (65-142 registers, half the
// occupancy: 45.3 -> 50.4 us); those keep the plain loop.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/GemmGen.h"

namespace fusec::codegen::detail {
namespace {
std::string str(int64_t v) { return std::to_string(v); }

/// At most this many raw 16-byte vectors per lane (64 registers): the
/// measured read pattern (bench/micro/stream_read.cu, rows) keeps 16.
constexpr int kVectorsInFlight = 16;
/// Warps an SM holds at the registers the raw vectors take (42-50
/// measured, allocated as 48-56: five blocks of 8 warps). A Q/K/V weight
/// of 6144 rows, a warp each, is more than that: with its loads all in
/// flight it ran 21.3 -> 22.3 us alone, so it keeps the plain loop.
constexpr int64_t kWarpsPerSmInFlight = 40;
} // namespace

bool gemvAllInFlight(int64_t k, int64_t laneStep, int weights, int64_t warps, int smCount) {
  return k % laneStep == 0 && (k / laneStep) * weights <= kVectorsInFlight && smCount > 0 &&
         warps <= kWarpsPerSmInFlight * smCount;
}

std::string gemvWeightLoop(const GemvLoop &l) {
  const int J = static_cast<int>(l.weights.size());
  const std::string &in = l.indent, K = str(l.k), S = str(l.laneStep);
  auto loads = [&](const std::string &ind, bool raw) {
    std::string t;
    for (int j = 0; j < J; ++j)
      t += raw ? ind + "fz_wr[u][" + str(j) + "] = fz_load_raw<" + l.elem + ", 8>(" +
                     l.weights[j].first + ", " + l.weights[j].second + ");\n"
               : ind + "fz_load<" + l.elem + ", 8>(" + l.weights[j].first + ", " +
                     l.weights[j].second + ", w[" + str(j) + "]);\n";
    return t;
  };
  std::string s;
  if (!l.allInFlight) {
    s += in + "#pragma unroll 4\n" + in + "for (int k = " + l.kStart + "; k < " + K + "; k += " +
         S + ") {\n";
    s += in + "  float w[" + str(J) + "][8];\n" + loads(in + "  ", false);
    return s + l.body + in + "}\n";
  }
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

} // namespace fusec::codegen::detail
