//===- RowStatsEpilogue.cpp - a product's rows reduced in its epilogue ----===//
//
// The GEMM epilogue for streamed row statistics (schedule/RowStatsForm.h),
// shared by the portable kernel and the Hopper one (their accumulators
// have one layout a warp: two rows a thread per 16-row slice, column pairs
// 8 apart). A thread computes the logits over its accumulators (the
// group's ops between the product and the max, in place), reduces them to
// a max and a sum of exponentials against that max, and the four threads
// of a row combine theirs by shuffles; warps side by side along N combine
// theirs in shared memory, and each tile stores one pair a row. The last
// tile of a row tile to finish (LastBlock.h) merges the pairs of its rows,
// a warp a row: (m1, l1) joins (m, l) as m' = max(m, m1), l' = l exp(m -
// m') + l1 exp(m1 - m'), the online softmax's rule, whatever the order. The
// ops on the row max and sum (log(l) + m) then run per row, and the results
// are stored. Picks (sums over the columns of a function of the logits, the
// column and per-row values: a target's logit) are summed alike, a partial a
// row and tile, and added up by the last tile.
//
// A row whose logits are all -inf has max -inf, and then sum NaN: what the
// unfused ops give (exp(-inf - -inf) is NaN), not the 0 a guarded kernel
// would (docs/reductions.md). The logits are computed from the product
// rounded to its dtype, as the graph has it; the exponentials and sums are
// fp32 whatever the logits' dtype.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/LastBlock.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// Statements joining the pair (`om`, `ol`) into (`m`, `l`).
std::string joinPair(const std::string &m, const std::string &l, const std::string &om,
                     const std::string &ol, const std::string &in) {
  return in + "{\n" + in + "  const float fz_nm = fmaxf(" + m + ", " + om + ");\n" + in +
         "  " + l + " = fz_nm == fz_ninf ? 0.f : " + l + " * __expf(" + m + " - fz_nm) + " +
         ol + " * __expf(" + om + " - fz_nm);\n" + in + "  " + m + " = fz_nm;\n" + in + "}\n";
}

} // namespace

int64_t GemmGen::rowStatsCounterBytes() const {
  int64_t tilesM = (shape.m + cfg.bm - 1) / cfg.bm;
  return 256 * ((tilesM * shape.batch * 4 + 255) / 256);
}

int64_t GemmGen::rowStatsScratchBytes() const {
  const int64_t sums = 2 + static_cast<int64_t>(rowStats->picks.size());
  return rowStatsCounterBytes() + sums * shape.batch * shape.m * tilesN() * 4;
}

std::string GemmGen::rowStatsEpilogue(const RowStatsLayout &L) {
  const int64_t tilesM = (shape.m + cfg.bm - 1) / cfg.bm;
  const std::string M = str(shape.m), N = str(shape.n), T = str(tilesN());
  const int rank = static_cast<int>(batchShape.size()) + 2;
  const std::string &in = L.indent;
  std::string s;
  s += in + "{  // row statistics: the tile's rows reduced to (max, sum of exponentials)\n";
  const std::string i1 = in + "  ";
  s += i1 + "const float fz_ninf = __int_as_float(0xff800000);\n";
  s += i1 + "float *const fz_pm = reinterpret_cast<float *>(fz_scratch + " +
       str(rowStatsCounterBytes()) + ");\n";
  const std::string pairs = str(shape.batch * shape.m * tilesN());
  s += i1 + "float *const fz_pl = fz_pm + " + pairs + "LL;\n";
  const size_t P = rowStats->picks.size();
  if (P)
    s += i1 + "float *const fz_pp = fz_pl + " + pairs + "LL;  // the picks' partials\n";
  s += batchIndices(i1);
  // The logits at (fz_em, fz_enl), in place of the accumulator. The
  // product rounded to its dtype, as the graph computes it: the row max is
  // then the unfused one exactly.
  std::vector<std::string> vars;
  for (size_t d = 0; d < batchShape.size(); ++d)
    vars.push_back("fz_bi" + str(d));
  vars.push_back("fz_eml");  // rows past M read row M - 1 (their results are not stored)
  vars.push_back("fz_enl");
  const std::string i4 = i1 + "      ";
  ElementEmitter e(fusion, vars, i4);
  const std::string product = storageType(dtypeOf(rowStats->product.getResult()));
  e.reduced = [&](mlir::Operation *) {
    return "fz_in(fz_out<" + product + ">::of(" + L.acc + "))";
  };
  std::string logits = e.emit(rowStats->logits, ElementEmitter::identity(rank));
  std::vector<std::string> picked;  // each pick's term at the element
  for (SumOp pick : rowStats->picks)
    picked.push_back(e.emit(pick.getInput(), ElementEmitter::identity(rank)));
  std::string chain = e.takeCode();
  // Pick k's sum a thread: fz_q<k>.
  auto q = [](size_t k) { return "fz_q" + std::to_string(k); };
  auto pairLoop = [&](const std::string &body) {
    return i1 + "    #pragma unroll\n" + i1 + "    for (int j = 0; j < " + str(L.pairs) +
           "; ++j)\n" + i1 + "      #pragma unroll\n" + i1 +
           "      for (int l = 0; l < 2; ++l) {\n" + body + i1 + "      }\n";
  };
  s += i1 + "#pragma unroll\n" + i1 + "for (int i = 0; i < " + str(L.slices) + "; ++i)\n";
  s += i1 + "  #pragma unroll\n" + i1 + "  for (int h = 0; h < 2; ++h) {\n";
  s += i1 + "    const int fz_em = " + L.row + ", fz_eml = min(fz_em, " + str(shape.m - 1) + ");\n";
  // Four maxima and sums side by side: a chain of one per column pair
  // would make each wait for the one before.
  s += i1 + "    float fz_m4[4] = {fz_ninf, fz_ninf, fz_ninf, fz_ninf}, fz_s4[4] = {0.f, 0.f, 0.f, 0.f};\n";
  for (size_t k = 0; k < P; ++k)
    s += i1 + "    float " + q(k) + " = 0.f;\n";
  // Columns past N only in a last partial tile column.
  const bool partial = shape.n % cfg.bn != 0;
  const std::string x = "static_cast<float>(" + logits + ")";
  std::string picks;  // the terms, read before the accumulator holds the logits
  for (size_t k = 0; k < P; ++k) {
    const std::string term = "static_cast<float>(" + picked[k] + ")";
    picks += i4 + q(k) + " += " + (partial ? "fz_en < " + N + " ? " + term + " : 0.f" : term) +
             ";\n";
  }
  s += pairLoop(i4 + "const int fz_en = " + L.col + ";\n" + i4 + "const int fz_enl = min(fz_en, " +
                str(shape.n - 1) + ");\n" + chain + i4 + "const float fz_x = " +
                (partial ? "fz_en < " + N + " ? " + x + " : fz_ninf" : x) + ";\n" + picks + i4 +
                L.acc + " = fz_x;\n" + i4 + "fz_m4[j & 3] = fmaxf(fz_m4[j & 3], fz_x);\n");
  for (size_t k = 0; k < P; ++k) {
    s += i1 + "    " + q(k) + " += __shfl_xor_sync(0xffffffffu, " + q(k) + ", 1);\n";
    s += i1 + "    " + q(k) + " += __shfl_xor_sync(0xffffffffu, " + q(k) + ", 2);\n";
  }
  s += i1 + "    float fz_mx = fmaxf(fmaxf(fz_m4[0], fz_m4[1]), fmaxf(fz_m4[2], fz_m4[3]));\n";
  s += i1 + "    fz_mx = fmaxf(fz_mx, __shfl_xor_sync(0xffffffffu, fz_mx, 1));\n";
  s += i1 + "    fz_mx = fmaxf(fz_mx, __shfl_xor_sync(0xffffffffu, fz_mx, 2));\n";
  s += i1 + "    // exp(x - m) as 2^(x log2 e - m log2 e); m = -inf (no column) as 0\n";
  s += i1 + "    const float fz_ml = fz_mx == fz_ninf ? 0.f : fz_mx * 1.44269504f;\n";
  s += pairLoop(i4 + "fz_s4[j & 3] += fz_ex2(fmaf(" + L.acc + ", 1.44269504f, -fz_ml));\n");
  s += i1 + "    float fz_sm = (fz_s4[0] + fz_s4[1]) + (fz_s4[2] + fz_s4[3]);\n";
  s += i1 + "    fz_sm += __shfl_xor_sync(0xffffffffu, fz_sm, 1);\n";
  s += i1 + "    fz_sm += __shfl_xor_sync(0xffffffffu, fz_sm, 2);\n";
  const std::string pairAt = "((long long)fz_b * " + M + " + fz_em) * " + T + " + fz_tn";
  // Pick k's partial of a row and tile: fz_pp[k * pairs + pairAt].
  auto pickAt = [&](size_t k) { return "fz_pp[" + str(int64_t(k)) + "LL * " + pairs + " + " + pairAt + "]"; };
  if (L.warpsN == 1) {
    s += i1 + "    if (lane % 4 == 0 && fz_em < " + M + ") {\n";
    s += i1 + "      fz_pm[" + pairAt + "] = fz_mx;\n";
    s += i1 + "      fz_pl[" + pairAt + "] = fz_sm;\n";
    for (size_t k = 0; k < P; ++k)
      s += i1 + "      " + pickAt(k) + " = " + q(k) + ";\n";
    s += i1 + "    }\n" + i1 + "  }\n";
  } else {
    // The warps along N, each over its columns: combined in shared memory.
    const std::string W = str(L.warpsN);
    s += i1 + "    if (lane % 4 == 0) {\n";
    s += i1 + "      fz_wmx[" + L.tileRow + "][" + L.warpN + "] = fz_mx;\n";
    s += i1 + "      fz_wsm[" + L.tileRow + "][" + L.warpN + "] = fz_sm;\n";
    for (size_t k = 0; k < P; ++k)
      s += i1 + "      fz_wpk[" + str(int64_t(k)) + "][" + L.tileRow + "][" + L.warpN + "] = " + q(k) + ";\n";
    s += i1 + "    }\n" + i1 + "  }\n";
    std::string shared = i1 + "__shared__ float fz_wmx[" + str(cfg.bm) + "][" + W + "], fz_wsm[" +
                         str(cfg.bm) + "][" + W + "];\n";
    if (P)
      shared += i1 + "__shared__ float fz_wpk[" + str(int64_t(P)) + "][" + str(cfg.bm) + "][" + W + "];\n";
    s = shared + s;
    s += i1 + L.sync + "\n";
    s += i1 + "for (int fz_r = " + L.thread + "; fz_r < " + str(cfg.bm) + "; fz_r += " +
         str(L.threads) + ") {\n";
    s += i1 + "  const int fz_em = fz_m0 + fz_r;\n" + i1 + "  if (fz_em >= " + M + ") break;\n";
    s += i1 + "  float fz_mx = fz_wmx[fz_r][0], fz_sm = fz_wsm[fz_r][0];\n";
    s += i1 + "  #pragma unroll\n" + i1 + "  for (int w = 1; w < " + W + "; ++w)\n";
    s += joinPair("fz_mx", "fz_sm", "fz_wmx[fz_r][w]", "fz_wsm[fz_r][w]", i1 + "  ");
    s += i1 + "  fz_pm[" + pairAt + "] = fz_mx;\n" + i1 + "  fz_pl[" + pairAt + "] = fz_sm;\n";
    for (size_t k = 0; k < P; ++k) {
      const std::string K = str(int64_t(k));
      s += i1 + "  {\n" + i1 + "    float fz_t = fz_wpk[" + K + "][fz_r][0];\n";
      s += i1 + "    #pragma unroll\n" + i1 + "    for (int w = 1; w < " + W + "; ++w) fz_t += fz_wpk[" + K +
           "][fz_r][w];\n";
      s += i1 + "    " + pickAt(k) + " = fz_t;\n" + i1 + "  }\n";
    }
    s += i1 + "}\n";
  }
  s += lastBlockHandshake(i1,
                          "reinterpret_cast<unsigned *>(fz_scratch) + fz_b * " + str(tilesM) +
                              " + fz_tm",
                          T, L.persistent ? "" : "return;", L.sync, L.leader);
  // The last tile: a warp a row over the row's pairs.
  std::vector<std::string> rowVars(vars.begin(), vars.end() - 1);
  rowVars.push_back("0");
  const std::string i3 = i1 + "    ";
  ElementEmitter r(fusion, rowVars, i3);
  r.reduced = [&](mlir::Operation *op) {
    for (size_t k = 0; k < P; ++k)
      if (op == rowStats->picks[k].getOperation())
        return "fz_Q" + std::to_string(k);
    return std::string(op == rowStats->max.getOperation() ? "fz_mx" : "fz_sm");
  };
  std::vector<std::string> results;
  for (mlir::Value v : fusion.getYield().getValues())
    results.push_back(r.emit(v, ElementEmitter::identity(rank)));
  std::string tail = r.takeCode();
  const int warps = L.threads / 32;
  if (L.persistent)
    s += i1 + "if (fz_last)\n";
  s += i1 + "for (int fz_r = " + L.warp + "; fz_r < " + str(cfg.bm) + "; fz_r += " + str(warps) +
       ") {\n";
  s += i1 + "  const int fz_em = fz_m0 + fz_r, fz_eml = fz_em;\n" + i1 + "  if (fz_em >= " + M +
       ") break;\n";
  s += i1 + "  const long long fz_o = ((long long)fz_b * " + M + " + fz_em) * " + T + ";\n";
  s += i1 + "  float fz_mx = fz_ninf, fz_sm = 0.f;\n";
  for (size_t k = 0; k < P; ++k)
    s += i1 + "  float fz_Q" + str(int64_t(k)) + " = 0.f;\n";
  s += i1 + "  for (int t = lane; t < " + T + "; t += 32) {\n";
  s += i1 + "    const float fz_qm = __ldcg(&fz_pm[fz_o + t]), fz_ql = __ldcg(&fz_pl[fz_o + t]);\n";
  s += joinPair("fz_mx", "fz_sm", "fz_qm", "fz_ql", i1 + "    ");
  for (size_t k = 0; k < P; ++k)
    s += i1 + "    fz_Q" + str(int64_t(k)) + " += __ldcg(&fz_pp[" + str(int64_t(k)) + "LL * " + pairs +
         " + fz_o + t]);\n";
  s += i1 + "  }\n";
  s += i1 + "  #pragma unroll\n" + i1 + "  for (int o = 16; o > 0; o /= 2) {\n";
  s += i1 + "    const float fz_om = __shfl_xor_sync(0xffffffffu, fz_mx, o);\n";
  s += i1 + "    const float fz_ol = __shfl_xor_sync(0xffffffffu, fz_sm, o);\n";
  s += joinPair("fz_mx", "fz_sm", "fz_om", "fz_ol", i1 + "    ");
  for (size_t k = 0; k < P; ++k)
    s += i1 + "    fz_Q" + str(int64_t(k)) + " += __shfl_xor_sync(0xffffffffu, fz_Q" +
         str(int64_t(k)) + ", o);\n";
  s += i1 + "  }\n";
  s += i1 + "  if (fz_mx == fz_ninf) fz_sm = __int_as_float(0x7fc00000);  // as exp(-inf - -inf)\n";
  s += i1 + "  if (lane == 0) {\n" + tail;
  for (unsigned o = 0; o < results.size(); ++o)
    s += i3 + "out" + str(o) + "[(long long)fz_b * " + M + " + fz_em] = fz_out<" +
         storageType(dtypeOf(fusion.getResult(o))) + ">::of(" + results[o] + ");\n";
  s += i1 + "  }\n" + i1 + "}\n" + in + "}\n";
  return s;
}

} // namespace fusec::codegen::detail
