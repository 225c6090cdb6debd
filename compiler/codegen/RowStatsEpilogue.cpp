//===- RowStatsEpilogue.cpp - a product's rows reduced in its epilogue ----===//
//
// The portable GEMM's epilogue for streamed row statistics
// (schedule/RowStatsForm.h). Each thread holds, per 16-row slice of its
// warp, two rows of wn / 8 column pairs (the mma.sync accumulator layout):
// it computes the logits there (the group's ops between the product and
// the max), reduces them to a max and a sum of exponentials against that
// max, and the four threads of a row combine theirs by shuffles. The warps
// along N combine theirs in shared memory, and each tile stores one pair a
// row. The last tile of a row tile to finish (LastBlock.h) merges the pairs
// of its rows, a warp a row: a pair (m1, l1) joins (m, l) as m' = max(m,
// m1), l' = l exp(m - m') + l1 exp(m1 - m'), the online softmax's rule,
// whatever the order. The ops on the row max and sum (log(l) + m) then run
// per row, and the results are stored.
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
  int64_t tilesN = (shape.n + cfg.bn - 1) / cfg.bn;
  return rowStatsCounterBytes() + 2 * shape.batch * shape.m * tilesN * 4;
}

std::string GemmGen::rowStatsEpilogue() {
  const int mi = cfg.wm / 16, ni = cfg.wn / 8, warpsN = cfg.bn / cfg.wn;
  const int64_t tilesM = (shape.m + cfg.bm - 1) / cfg.bm, tilesN = (shape.n + cfg.bn - 1) / cfg.bn;
  const std::string M = str(shape.m), N = str(shape.n), T = str(tilesN);
  const int rank = static_cast<int>(batchShape.size()) + 2;
  std::string s;
  s += "  // Row statistics: the tile's rows reduced to (max, sum of exponentials).\n";
  s += "  __shared__ float fz_wmx[" + str(cfg.bm) + "][" + str(warpsN) + "], fz_wsm[" +
       str(cfg.bm) + "][" + str(warpsN) + "];\n";
  s += "  __shared__ bool fz_last;\n";
  s += "  const float fz_ninf = __int_as_float(0xff800000);\n";
  s += "  float *const fz_pm = reinterpret_cast<float *>(fz_scratch + " +
       str(rowStatsCounterBytes()) + ");\n";
  s += "  float *const fz_pl = fz_pm + " + str(shape.batch * shape.m * tilesN) + "LL;\n";
  s += batchIndices("  ");
  // The logits at (fz_em, fz_enl) from the accumulator.
  std::vector<std::string> vars;
  for (size_t d = 0; d < batchShape.size(); ++d)
    vars.push_back("fz_bi" + str(d));
  vars.push_back("fz_em");
  vars.push_back("fz_enl");
  ElementEmitter e(fusion, vars, "          ");
  // The product rounded to its dtype, as the graph computes it: the row
  // max is then the unfused one exactly.
  const std::string product = storageType(dtypeOf(rowStats->product.getResult()));
  e.reduced = [&](mlir::Operation *) {
    return "fz_in(fz_out<" + product + ">::of(acc[i][j][2 * h + l]))";
  };
  std::string logits = e.emit(rowStats->logits, ElementEmitter::identity(rank));
  std::string chain = e.takeCode();
  s += "  #pragma unroll\n  for (int i = 0; i < " + str(mi) + "; ++i)\n";
  s += "    #pragma unroll\n    for (int h = 0; h < 2; ++h) {\n";
  s += "      const int fz_em = fz_m0 + fz_wm + i * 16 + lane / 4 + h * 8;\n";
  s += "      float fz_x[" + str(ni) + "][2], fz_mx = fz_ninf, fz_sm = 0.f;\n";
  s += "      #pragma unroll\n      for (int j = 0; j < " + str(ni) + "; ++j)\n";
  s += "        #pragma unroll\n        for (int l = 0; l < 2; ++l) {\n";
  s += "          const int fz_en = fz_n0 + fz_wn + j * 8 + (lane % 4) * 2 + l;\n";
  s += "          const int fz_enl = min(fz_en, " + str(shape.n - 1) + ");\n";
  s += chain;
  s += "          fz_x[j][l] = fz_en < " + N + " ? static_cast<float>(" + logits +
       ") : fz_ninf;\n";
  s += "          fz_mx = fmaxf(fz_mx, fz_x[j][l]);\n        }\n";
  s += "      fz_mx = fmaxf(fz_mx, __shfl_xor_sync(0xffffffffu, fz_mx, 1));\n";
  s += "      fz_mx = fmaxf(fz_mx, __shfl_xor_sync(0xffffffffu, fz_mx, 2));\n";
  s += "      #pragma unroll\n      for (int j = 0; j < " + str(ni) + "; ++j)\n";
  s += "        #pragma unroll\n        for (int l = 0; l < 2; ++l)\n";
  s += "          fz_sm += fz_mx == fz_ninf ? 0.f : __expf(fz_x[j][l] - fz_mx);\n";
  s += "      fz_sm += __shfl_xor_sync(0xffffffffu, fz_sm, 1);\n";
  s += "      fz_sm += __shfl_xor_sync(0xffffffffu, fz_sm, 2);\n";
  s += "      if (lane % 4 == 0) {\n";
  s += "        fz_wmx[fz_wm + i * 16 + lane / 4 + h * 8][warp % " + str(warpsN) + "] = fz_mx;\n";
  s += "        fz_wsm[fz_wm + i * 16 + lane / 4 + h * 8][warp % " + str(warpsN) + "] = fz_sm;\n";
  s += "      }\n    }\n";
  s += "  __syncthreads();\n";
  s += "  for (int fz_r = threadIdx.x; fz_r < " + str(cfg.bm) + "; fz_r += " + str(threads) +
       ") {\n";
  s += "    const int fz_em = fz_m0 + fz_r;\n    if (fz_em >= " + M + ") break;\n";
  s += "    float fz_mx = fz_wmx[fz_r][0], fz_sm = fz_wsm[fz_r][0];\n";
  s += "    #pragma unroll\n    for (int w = 1; w < " + str(warpsN) + "; ++w)\n";
  s += joinPair("fz_mx", "fz_sm", "fz_wmx[fz_r][w]", "fz_wsm[fz_r][w]", "    ");
  s += "    const long long fz_o = ((long long)fz_b * " + M + " + fz_em) * " + T + " + fz_tn;\n";
  s += "    fz_pm[fz_o] = fz_mx;\n    fz_pl[fz_o] = fz_sm;\n  }\n";
  s += lastBlockHandshake("  ",
                          "reinterpret_cast<unsigned *>(fz_scratch) + fz_b * " + str(tilesM) +
                              " + fz_tm",
                          T, "return;");
  // The last tile: a warp a row over the row's pairs.
  std::vector<std::string> rowVars(vars.begin(), vars.end() - 1);
  rowVars.push_back("0");
  ElementEmitter r(fusion, rowVars, "      ");
  r.reduced = [&](mlir::Operation *op) {
    return std::string(op == rowStats->max.getOperation() ? "fz_mx" : "fz_sm");
  };
  std::vector<std::string> results;
  for (mlir::Value v : fusion.getYield().getValues())
    results.push_back(r.emit(v, ElementEmitter::identity(rank)));
  std::string tail = r.takeCode();
  const int warps = threads / 32;
  s += "  for (int fz_r = warp; fz_r < " + str(cfg.bm) + "; fz_r += " + str(warps) + ") {\n";
  s += "    const int fz_em = fz_m0 + fz_r;\n    if (fz_em >= " + M + ") break;\n";
  s += "    const long long fz_o = ((long long)fz_b * " + M + " + fz_em) * " + T + ";\n";
  s += "    float fz_mx = fz_ninf, fz_sm = 0.f;\n";
  s += "    for (int t = lane; t < " + T + "; t += 32) {\n";
  s += "      const float fz_qm = __ldcg(&fz_pm[fz_o + t]), fz_ql = __ldcg(&fz_pl[fz_o + t]);\n";
  s += joinPair("fz_mx", "fz_sm", "fz_qm", "fz_ql", "      ");
  s += "    }\n";
  s += "    #pragma unroll\n    for (int o = 16; o > 0; o /= 2) {\n";
  s += "      const float fz_om = __shfl_xor_sync(0xffffffffu, fz_mx, o);\n";
  s += "      const float fz_ol = __shfl_xor_sync(0xffffffffu, fz_sm, o);\n";
  s += joinPair("fz_mx", "fz_sm", "fz_om", "fz_ol", "      ");
  s += "    }\n";
  s += "    if (fz_mx == fz_ninf) fz_sm = __int_as_float(0x7fc00000);  // as exp(-inf - -inf)\n";
  s += "    if (lane == 0) {\n" + tail;
  for (unsigned o = 0; o < results.size(); ++o)
    s += "      out" + str(o) + "[(long long)fz_b * " + M + " + fz_em] = fz_out<" +
         storageType(dtypeOf(fusion.getResult(o))) + ">::of(" + results[o] + ");\n";
  s += "    }\n  }\n";
  return s;
}

} // namespace fusec::codegen::detail
