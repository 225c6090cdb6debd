//===- GemmKernel.cpp - the matmul family: tensor-core GEMM + epilogue ----===//
//
// C = A @ B for bf16/f16 operands with fp32 accumulators, on the m16n8k16
// tensor-core instruction (sm_80 and later), and the group's elementwise
// epilogue applied to the accumulators in registers before the one store.
//
//   * Each block owns a bm x bn output tile (tiles ordered in groups of 8 tile
//     rows so neighbouring blocks share operand tiles in L2) and walks K in
//     steps of bk. `stages` steps are in flight: cp.async copies them into
//     shared memory while the tensor cores work on the oldest.
//   * Operands are read in place through their strided views: each is stored
//     in shared memory the way it lies in memory (K-contiguous, or M/N-
//     contiguous, then read with the transposing ldmatrix), rows padded by 16
//     bytes so ldmatrix reads are free of bank conflicts.
//   * Tile edges (any M, N, K) are zero-filled by the copies. Operands whose
//     rows are not 16-byte aligned are copied element by element instead.
//   * splitK > 1 (decode shapes, few output tiles): blocks along grid.y sum
//     different K ranges; each writes fp32 partials, and the last to arrive
//     (a counter per tile) adds them and runs the epilogue.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/schedule/GemmConfig.h"
#include "compiler/codegen/GemmGen.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/LastBlock.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/cost/CostModel.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/shape/ShapeRules.h"

#include <map>
#include <regex>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// An emitter over an operand's matrix domain [batch..., rows, cols] with
/// `r`, `c` as its last two indices (the batch ones from fz_b), and the
/// operand's own index in that domain (broadcast dims projected away).
ElementEmitter operandEmitter(const GemmGen &g, const Operand &o, const std::string &r,
                              const std::string &c, const std::string &indent, Index &idx) {
  std::vector<std::string> vars(g.batchShape.size());
  int64_t inner = 1;
  for (int d = (int)g.batchShape.size() - 1; d >= 0; --d) {
    vars[d] = "((fz_b / " + str(inner) + ") % " + str(g.batchShape[d]) + ")";
    inner *= g.batchShape[d];
  }
  vars.push_back(r);
  vars.push_back(c);
  std::vector<int64_t> domain = g.batchShape;
  domain.push_back(o.layout.rows);
  domain.push_back(o.layout.cols);
  idx = ElementEmitter::project(ElementEmitter::identity(domain.size()), domain,
                                shapeOf(o.value));
  return ElementEmitter(g.fusion, vars, indent);
}
} // namespace

std::string GemmGen::computedElement(const Operand &o, const std::string &r,
                                     const std::string &c, const std::string &indent,
                                     std::string &value) const {
  // Clamped into the operand: the caller zeroes elements past its edges, and
  // the prologue's loads stay in bounds without a branch around them.
  Index idx;
  ElementEmitter e = operandEmitter(*this, o, "min(" + r + ", " + str(o.layout.rows - 1) + ")",
                                    "min(" + c + ", " + str(o.layout.cols - 1) + ")", indent, idx);
  value = e.emit(o.value, idx);
  return e.takeCode();
}

std::string GemmGen::operandVector(const Operand &o, const std::string &r, const std::string &c,
                                   bool alongRows, const std::string &dst,
                                   const std::string &indent) const {
  if (!o.computed)
    return indent + "fz_load<" + elem + ", 8>(" + o.ptr + ", " + offsetExpr(o, "fz_b", r, c) +
           ", " + dst + ");\n";
  // Lane l of 8 along the unit-stride dim: inputs contiguous along it are
  // one vector load, those constant along it one scalar, both before the loop.
  Index idx;
  ElementEmitter e = operandEmitter(*this, o, alongRows ? "(" + r + " + l)" : r,
                                    alongRows ? c : "(" + c + " + l)", indent + "    ", idx);
  int dim = static_cast<int>(batchShape.size()) + (alongRows ? 0 : 1);
  HoistedLoads hoist{dim, 8, alongRows ? r : c, indent + "  "};
  e.load = [&](ElementEmitter &em, BlockArgument arg, const Index &i) {
    if (dtypeBytes(dtypeOf(arg)) * 8 > 16)  // 8 lanes would be wider than one 16-byte load
      return "fz_load1(" + ElementEmitter::argName(arg.getArgNumber()) + ", " +
             em.offset(shapeOf(arg), i) + ")";
    return hoist.load(em, arg, i);
  };
  std::string v = e.emit(o.value, idx), code = e.takeCode();
  return indent + "{  // the operand's prologue\n" + hoist.pre + indent +
         "  #pragma unroll\n" + indent + "  for (int l = 0; l < 8; ++l) {\n" + code + indent +
         "    " + dst + "[l] = fz_in(fz_out<" + elem + ">::of(" + v + "));\n" + indent + "  }\n" +
         indent + "}\n";
}

// The copy of k-step `kt` into stage `st`, for one operand. For A the tile
// rows are M (or K when M-contiguous); for B, N (or K).
std::string GemmGen::loader(const Operand &o, bool isA) const {
  std::string smem = isA ? "fz_As" : "fz_Bs";
  int64_t mn = isA ? cfg.bm : cfg.bn;
  std::string mn0 = isA ? "fz_m0" : "fz_n0";
  int64_t mnSize = isA ? shape.m : shape.n;
  int64_t stride = o.tileCols;
  // Tile as stored: rows x cols, cols contiguous.
  int64_t rows = o.kContiguous ? mn : cfg.bk, cols = o.kContiguous ? cfg.bk : mn;
  std::string s;
  auto coords = [&](const std::string &row, const std::string &col, std::string &k,
                    std::string &x) {
    k = o.kContiguous ? "(k0 + " + col + ")" : "(k0 + " + row + ")";
    x = o.kContiguous ? "(" + mn0 + " + " + row + ")" : "(" + mn0 + " + " + col + ")";
  };
  std::string k, x;
  if (o.computed)
    s += std::string("      // ") + (isA ? "A" : "B") + ": computed by the group's prologue as it is loaded\n";
  // A computed operand whose contiguous extent is a multiple of 8: 8
  // elements at a time along it, as the dot-product kernel computes them
  // (inputs as vectors where they allow), every chunk's loads before its
  // store, a 16-byte store to the stage. Indices are clamped into the
  // operand; chunks past its edges store zeros.
  int64_t extent = o.kContiguous ? shape.k : mnSize;
  if (o.computed && extent % 8 == 0) {
    int64_t per = (rows * cols / 8 + threads - 1) / threads;
    coords("row", "col", k, x);
    bool alongRows = isA != o.kContiguous;
    std::string kEdge = o.kContiguous ? str(shape.k - 8) : str(shape.k - 1);
    std::string xEdge = o.kContiguous ? str(mnSize - 1) : str(mnSize - 8);
    std::string kc = "min(" + k + ", " + kEdge + ")", xc = "min(" + x + ", " + xEdge + ")";
    std::string r = isA ? xc : kc, cc = isA ? kc : xc;
    s += "      #pragma unroll\n      for (int u = 0; u < " + str(per) + "; ++u) {\n";
    s += "        const int c = threadIdx.x + u * " + str(threads) + ";\n";
    s += "        const int row = c / " + str(cols / 8) + ", col = (c % " + str(cols / 8) +
         ") * 8;\n";
    s += "        if (c < " + str(rows * cols / 8) + ") {\n";
    s += "          const bool ok = " + k + " < kEnd && " + x + " < " + str(mnSize) + ";\n";
    s += "          float v[8];\n" + operandVector(o, r, cc, alongRows, "v", "          ");
    s += "          if (!ok)\n            for (int l = 0; l < 8; ++l) v[l] = 0.f;\n";
    s += "          fz_store<" + elem + ", 8>(" + smem + "(st), row * " + str(stride) +
         " + col, v);\n        }\n      }\n";
    return s;
  }
  if (o.vector) {
    int64_t chunks = rows * cols / 8;
    s += "      for (int c = threadIdx.x; c < " + str(chunks) + "; c += " + str(threads) + ") {\n";
    s += "        const int row = c / " + str(cols / 8) + ", col = (c % " + str(cols / 8) +
         ") * 8;\n";
    coords("row", "col", k, x);
    s += "        const bool ok = " + k + " < kEnd && " + x + " < " + str(mnSize) + ";\n";
    std::string r = isA ? x : k, cc = isA ? k : x;
    s += "        const " + elem + " *src = " + o.ptr + " + (ok ? " +
         offsetExpr(o, "fz_b", r, cc) + " : 0);\n";
    s += "        fz_cp16z(" + smem + "(st) + row * " + str(stride) + " + col, src, ok);\n";
    s += "      }\n";
  } else if (int64_t total = rows * cols, per = (total + threads - 1) / threads; per <= 16) {
    // All of a thread's loads first, then the stores: the loads are in
    // flight together instead of each waiting for the one before.
    s += "      {\n        " + elem + " fz_e[" + str(per) + "];\n";
    s += "        #pragma unroll\n        for (int u = 0; u < " + str(per) + "; ++u) {\n";
    s += "          const int e = threadIdx.x + u * " + str(threads) + ";\n";
    s += "          const int row = e / " + str(cols) + ", col = e % " + str(cols) + ";\n";
    coords("row", "col", k, x);
    s += "          const bool ok = e < " + str(total) + " && " + k + " < kEnd && " + x + " < " +
         str(mnSize) + ";\n";
    std::string r = isA ? x : k, cc = isA ? k : x;
    if (o.computed) {
      std::string v;
      s += computedElement(o, r, cc, "          ", v);
      s += "          fz_e[u] = ok ? fz_out<" + elem + ">::of(" + v + ") : " + elem +
           "{0};\n        }\n";
    } else {
      s += "          fz_e[u] = ok ? " + o.ptr + "[" + offsetExpr(o, "fz_b", r, cc) + "] : " +
           elem + "{0};\n        }\n";
    }
    s += "        #pragma unroll\n        for (int u = 0; u < " + str(per) + "; ++u) {\n";
    s += "          const int e = threadIdx.x + u * " + str(threads) + ";\n";
    s += "          if (e < " + str(total) + ") " + smem + "(st)[(e / " + str(cols) + ") * " +
         str(stride) + " + e % " + str(cols) + "] = fz_e[u];\n        }\n      }\n";
  } else {  // too many elements per thread to hold: one at a time
    s += "      for (int e = threadIdx.x; e < " + str(rows * cols) + "; e += " + str(threads) +
         ") {\n";
    s += "        const int row = e / " + str(cols) + ", col = e % " + str(cols) + ";\n";
    coords("row", "col", k, x);
    s += "        const bool ok = " + k + " < kEnd && " + x + " < " + str(mnSize) + ";\n";
    std::string r = isA ? x : k, cc = isA ? k : x, v;
    if (o.computed) {
      s += computedElement(o, r, cc, "        ", v);
      v = "fz_out<" + elem + ">::of(" + v + ")";
    } else {
      v = o.ptr + "[" + offsetExpr(o, "fz_b", r, cc) + "]";
    }
    s += "        " + smem + "(st)[row * " + str(stride) + " + col] = ok ? " + v + " : " + elem +
         "{0};\n";
    s += "      }\n";
  }
  return s;
}

/// Fragment loads and MMAs of one 16-deep slice `kk` of stage `st`.
std::string GemmGen::mmaStep() const {
  int mi = cfg.wm / 16, nj = cfg.wn / 16;
  std::string s;
  s += "        unsigned fa[" + str(mi) + "][4], fb[" + str(nj * 2) + "][2];\n";
  s += "        #pragma unroll\n        for (int i = 0; i < " + str(mi) + "; ++i) {\n";
  if (a.kContiguous)
    s += "          fz_ldsm4(fa[i], fz_As(st) + (fz_wm + i * 16 + lane % 16) * " +
         str(a.tileCols) + " + kk * 16 + (lane / 16) * 8);\n";
  else
    s += "          fz_ldsm4t(fa[i], fz_As(st) + (kk * 16 + (lane / 16) * 8 + lane % 8) * " +
         str(a.tileCols) + " + fz_wm + i * 16 + ((lane / 8) % 2) * 8);\n";
  s += "        }\n";
  s += "        #pragma unroll\n        for (int j = 0; j < " + str(nj) + "; ++j) {\n";
  s += "          unsigned r[4];\n";
  if (b.kContiguous)
    s += "          fz_ldsm4(r, fz_Bs(st) + (fz_wn + j * 16 + (lane / 16) * 8 + lane % 8) * " +
         str(b.tileCols) + " + kk * 16 + ((lane / 8) % 2) * 8);\n";
  else
    s += "          fz_ldsm4t(r, fz_Bs(st) + (kk * 16 + ((lane / 8) % 2) * 8 + lane % 8) * " +
         str(b.tileCols) + " + fz_wn + j * 16 + (lane / 16) * 8);\n";
  s += "          fb[2 * j][0] = r[0]; fb[2 * j][1] = r[1]; fb[2 * j + 1][0] = r[2]; "
       "fb[2 * j + 1][1] = r[3];\n        }\n";
  std::string op = elem == "fz_bf16" ? "fz_mma_bf16" : "fz_mma_f16";
  s += "        #pragma unroll\n        for (int i = 0; i < " + str(mi) + "; ++i)\n";
  s += "          #pragma unroll\n          for (int j = 0; j < " + str(nj * 2) + "; ++j)\n";
  s += "            " + op + "(acc[i][j], fa[i], fb[j][0], fb[j][1]);\n";
  return s;
}

/// The epilogue of one element (fz_em, fz_en) whose product is fz_v. With
/// `prefetch`, its loads go there instead, as declarations (with the batch
/// indices, at function scope): their indices take the column as fz_enc,
/// which the caller keeps inside N (fz_en is N or more on lanes without an
/// element); loads whose index needs more than these stay in place.
std::string GemmGen::scalarEpilogue(std::string *prefetch, const char *load) {
  int rank = static_cast<int>(batchShape.size()) + 2;
  std::vector<std::string> vars;
  for (size_t d = 0; d < batchShape.size(); ++d)
    vars.push_back("fz_bi" + str(d));
  vars.push_back("fz_em");
  vars.push_back(prefetch ? "fz_enc" : "fz_en");
  ElementEmitter e(fusion, vars, "    ");
  std::map<std::string, std::string> hoisted;
  static const std::regex known(R"(^(fz_em|fz_enc|fz_bi[0-9]+|long)$)");
  e.load = [&](ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
    std::string off = em.offset(shapeOf(arg), idx);
    std::string x = load + ("(" + ElementEmitter::argName(arg.getArgNumber()) + ", " + off + ")");
    if (!prefetch)
      return x;
    static const std::regex ident(R"([A-Za-z_][A-Za-z_0-9]*)");
    for (auto it = std::sregex_iterator(off.begin(), off.end(), ident); it != std::sregex_iterator();
         ++it)
      if (!std::regex_match(it->str(), known))
        return x;
    auto [it, fresh] = hoisted.try_emplace(x, "fz_pre" + str(hoisted.size()));
    if (fresh)
      *prefetch += "  const auto " + it->second + " = " + x + ";\n";
    return it->second;
  };
  e.reduced = [](Operation *) { return std::string("fz_v"); };
  std::vector<std::string> results;
  Index id = ElementEmitter::identity(rank);
  for (Value v : fusion.getYield().getValues())
    results.push_back(e.emit(v, id));
  std::string s = e.takeCode();
  if (prefetch)
    *prefetch = batchIndices("  ") + *prefetch;
  else
    s = batchIndices("    ") + s;
  for (unsigned o = 0; o < results.size(); ++o)
    s += "    out" + str(o) + "[((long long)fz_b * " + str(shape.m) + " + fz_em) * " +
         str(shape.n) + " + fz_en] = fz_out<" + storageType(dtypeOf(fusion.getResult(o))) +
         ">::of(" + results[o] + ");\n";
  return s;
}

/// Epilogue of one accumulator pair: columns fz_en, fz_en + 1 of row fz_em.
std::string GemmGen::pairEpilogue(const std::string &em, const std::string &en,
                                  const std::string &acc0, const std::string &acc1,
                                  const std::string &second0, const std::string &second1) {
  std::string s;
  if (tmaStore) {
    // Every pair goes to its box, whose parts past M and N the TMA store
    // leaves out; indices clamped into the tensors keep the epilogue's loads
    // in bounds (N is a multiple of 8 here). Unguarded, the compiler can
    // batch a box's loads and overlap the pairs' arithmetic: the guarded
    // form waited on each pair's bias load in turn.
    s += "        const int fz_em = min(" + em + ", " + str(shape.m - 1) + ");\n";
    s += "        const int fz_en = min(" + en + ", " + str(shape.n - 2) + ");\n";
    s += "        {\n";
  } else {
    s += "        const int fz_em = " + em + ";\n";
    s += "        const int fz_en = " + en + ";\n";
    s += "        if (fz_em < " + str(shape.m) + " && fz_en < " + str(shape.n) + ") {\n";
  }
  s += "          const float fz_acc2[2] = {" + acc0 + ", " + acc1 + "};\n";
  if (mm2)
    s += "          const float fz_bcc2[2] = {" + second0 + ", " + second1 + "};\n";
  return s + batchIndices("          ") + epilogue() + "        }\n";
}

std::string GemmGen::epilogue() {
  int rank = static_cast<int>(batchShape.size()) + 2;
  std::vector<std::string> vars;
  for (size_t d = 0; d < batchShape.size(); ++d)
    vars.push_back("fz_bi" + str(d));
  vars.push_back("fz_em");
  vars.push_back("fz_enl");
  ElementEmitter e(fusion, vars, "            ");
  // Per pair: a bias along N loaded once, a residual row as one 2-vector.
  HoistedLoads hoist{rank - 1, 2, "fz_en", "          "};
  const std::string boxed = kBoxedIndex;
  e.load = [&](ElementEmitter &em, BlockArgument arg, const Index &idx) {
    // The residual the TMA loaded into the output's box (tmaStore).
    if ((int)arg.getArgNumber() == tmaResidual && ElementEmitter::isIdentity(idx)) {
      if (!hoist.names.count("boxed")) {
        hoist.names["boxed"] = "fz_res";
        // A shared-memory pointer: fz_load's read-only global path would fault.
        // The box holds the residual's type (f16 or bf16, as the output's size).
        std::string t = storageType(dtypeOf(arg));
        hoist.pre += "          float fz_res[2];\n          fz_load_shared<" + t +
                     ", 2>(reinterpret_cast<const " + t + " *>(fz_out0_tile) + " + boxed +
                     ", fz_res);\n";
      }
      return std::string("fz_res[l]");
    }
    return hoist.load(em, arg, idx);
  };
  e.reduced = [&](Operation *op) {
    return std::string(mm2 && op == mm2.getOperation() ? "fz_bcc2[l]" : "fz_acc2[l]");
  };
  std::vector<std::string> results;
  Index id = ElementEmitter::identity(rank);
  for (Value v : fusion.getYield().getValues())
    results.push_back(e.emit(v, id));
  std::string body = e.takeCode();
  std::string s;
  for (unsigned o = 0; o < results.size(); ++o)
    s += "          " + std::string(computeType(dtypeOf(fusion.getResult(o)))) + " r" + str(o) +
         "[2];\n";
  s += hoist.pre;
  s += "          #pragma unroll\n          for (int l = 0; l < 2; ++l) {\n";
  s += "            const int fz_enl = min(fz_en + l, " + str(shape.n - 1) + ");\n";
  s += body;
  for (unsigned o = 0; o < results.size(); ++o)
    s += "            r" + str(o) + "[l] = " + results[o] + ";\n";
  s += "          }\n";
  std::string off = "((long long)fz_b * " + str(shape.m) + " + fz_em) * " + str(shape.n) + " + fz_en";
  for (unsigned o = 0; o < results.size(); ++o) {
    std::string t = storageType(dtypeOf(fusion.getResult(o)));
    if (tmaStore) {
      // Column chunks of 16 bytes swap places by the row's position in its
      // 8-row group: the TMA's 128-byte swizzle, and no bank conflicts for
      // the 8 rows a warp's store covers.
      s += "          fz_store<" + t + ", 2>(fz_out" + str(o) + "_tile, " + boxed + ", r" + str(o) +
           ");\n";
      continue;
    }
    if (stagedStore) {
      // One 4- or 8-byte store: columns fz_en - fz_n0 are even, so is the stride.
      s += "          fz_store<" + t + ", 2>(fz_out" + str(o) + "_tile, (fz_em - fz_m0) * " +
           str(stagedStride(o)) + " + fz_en - fz_n0, r" + str(o) + ");\n";
      continue;
    }
    if (shape.n % 2 == 0)
      s += "          fz_store<" + t + ", 2>(out" + str(o) + ", " + off + ", r" + str(o) + ");\n";
    else
      s += "          out" + str(o) + "[" + off + "] = fz_out<" + t + ">::of(r" + str(o) +
           "[0]);\n          if (fz_en + 1 < " + str(shape.n) + ") out" + str(o) + "[" + off +
           " + 1] = fz_out<" + t + ">::of(r" + str(o) + "[1]);\n";
  }
  return s;
}

// An accumulator pair is 4 or 8 bytes of a row: written straight from the
// fragments, a warp's store covers half of each 32-byte sector it touches and
// leaves HBM the merging, which large outputs pay for in full (docs/matmul.md,
// "Prologues", the portable kernel's output tiles). Staged through
// shared memory, every thread writes whole 16-byte pieces of a row.
int64_t GemmGen::stagedStride(unsigned o) {
  int64_t bytes = dtypeBytes(dtypeOf(fusion.getResult(o)));
  return cfg.bn + 16 / bytes;  // a 16-byte pad: rows stay aligned, banks shift
}

int64_t GemmGen::stagedOffset(unsigned o) {
  int64_t off = 0;
  for (unsigned i = 0; i < o; ++i)
    off += (cfg.bm * stagedStride(i) * dtypeBytes(dtypeOf(fusion.getResult(i))) + 15) / 16 * 16;
  return off;
}

bool GemmGen::stagingFits() {
  unsigned n = fusion.getNumResults();
  int64_t last = cfg.bm * stagedStride(n - 1) * dtypeBytes(dtypeOf(fusion.getResult(n - 1)));
  return stagedOffset(n - 1) + last <= stageBytes * cfg.stages;
}

std::string GemmGen::stagedCopyOut() {
  std::string s = "  __syncthreads();  // every output tile is in shared memory\n";
  for (unsigned o = 0; o < fusion.getNumResults(); ++o) {
    int64_t bytes = dtypeBytes(dtypeOf(fusion.getResult(o)));
    // 16-byte pieces when every row starts aligned, else one element per thread.
    int64_t v = shape.n % (16 / bytes) == 0 ? 16 / bytes : 1;
    std::string per = str(cfg.bn / v);
    s += "  for (int fz_i = threadIdx.x; fz_i < " + str(cfg.bm) + " * " + per + "; fz_i += " +
         str(threads) + ") {\n";
    s += "    const int fz_r = fz_i / " + per + ", fz_c = (fz_i % " + per + ") * " + str(v) + ";\n";
    s += "    const int fz_em = fz_m0 + fz_r, fz_en = fz_n0 + fz_c;\n";
    s += "    if (fz_em < " + str(shape.m) + " && fz_en < " + str(shape.n) + ") {\n";
    std::string src = "fz_out" + str(o) + "_tile[fz_r * " + str(stagedStride(o)) + " + fz_c]";
    std::string dst = "out" + str(o) + "[((long long)fz_b * " + str(shape.m) + " + fz_em) * " +
                      str(shape.n) + " + fz_en]";
    if (v > 1)
      s += "      *reinterpret_cast<uint4 *>(&" + dst + ") = *reinterpret_cast<const uint4 *>(&" +
           src + ");\n";
    else
      s += "      " + dst + " = " + src + ";\n";
    s += "    }\n  }\n";
  }
  return s;
}

KernelText GemmGen::source() {
  int mi = cfg.wm / 16, ni = cfg.wn / 8;
  int64_t tilesM = (shape.m + cfg.bm - 1) / cfg.bm, tilesN = (shape.n + cfg.bn - 1) / cfg.bn;
  int64_t aElems = a.tileRows * a.tileCols, bElems = b.tileRows * b.tileCols;
  int64_t kSteps = (shape.k + cfg.bk - 1) / cfg.bk;
  int64_t stepsPerSplit = (kSteps + cfg.splitK - 1) / cfg.splitK;
  KernelText text;
  text.qualifiers = "__launch_bounds__(" + str(threads) + ")";
  text.params = parameters(fusion);
  if (cfg.splitK > 1 || rowStats)
    text.params.push_back(kScratchParam);
  text.staticShared = cfg.splitK > 1 || rowStats;  // fz_last
  std::string s;
  s += "  extern __shared__ __align__(16) unsigned char fz_dyn[];\n";
  s += "  " + elem + " *const fz_smem = reinterpret_cast<" + elem + " *>(fz_dyn);\n";
  s += "#define fz_As(st) (fz_smem + (st) * " + str(aElems + bElems) + ")\n";
  s += "#define fz_Bs(st) (fz_smem + (st) * " + str(aElems + bElems) + " + " + str(aElems) + ")\n";
  s += tileOrder("blockIdx.x", "  ");
  s += "  const int fz_b = blockIdx.z;\n";
  s += "  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;\n";
  s += "  const int fz_wm = (warp / " + str(cfg.bn / cfg.wn) + ") * " + str(cfg.wm) +
       ", fz_wn = (warp % " + str(cfg.bn / cfg.wn) + ") * " + str(cfg.wn) + ";\n";
  s += "  const int fz_kt0 = blockIdx.y * " + str(stepsPerSplit) + ";\n";
  s += "  const int fz_kt1 = min(fz_kt0 + " + str(stepsPerSplit) + ", " + str(kSteps) + ");\n";
  s += "  const int kEnd = min(fz_kt1 * " + str(cfg.bk) + ", " + str(shape.k) + ");\n";
  s += "  float acc[" + str(mi) + "][" + str(ni) + "][4];\n";
  s += "  #pragma unroll\n  for (int i = 0; i < " + str(mi) + "; ++i)\n    #pragma unroll\n"
       "    for (int j = 0; j < " + str(ni) + "; ++j)\n      acc[i][j][0] = acc[i][j][1] = "
       "acc[i][j][2] = acc[i][j][3] = 0.f;\n";
  std::string load = "    if (kt < fz_kt1) {\n      const int k0 = kt * " + str(cfg.bk) + ";\n" +
                     // An operand copied element by element waits for its loads
                     // before the stage's other copies would be issued: the
                     // asynchronous copies go first.
                     (a.vector || !b.vector ? loader(a, true) + loader(b, false)
                                            : loader(b, false) + loader(a, true)) +
                     "    }\n    fz_cp_commit();\n";
  s += "  // the first stages start arriving\n";
  s += "  #pragma unroll 1\n  for (int p = 0; p < " + str(cfg.stages - 1) + "; ++p) {\n";
  s += "    const int kt = fz_kt0 + p, st = p;\n" + load + "  }\n";
  s += "  #pragma unroll 1\n  for (int kt0 = fz_kt0; kt0 < fz_kt1; ++kt0) {\n";
  s += "    fz_cp_wait<" + str(cfg.stages - 2) + ">();\n    __syncthreads();\n";
  s += "    {  // the step stages-1 ahead goes where the previous step was\n";
  s += "      const int kt = kt0 + " + str(cfg.stages - 1) + ", st = (kt - fz_kt0) % " +
       str(cfg.stages) + ";\n" + load + "    }\n";
  s += "    const int st = (kt0 - fz_kt0) % " + str(cfg.stages) + ";\n";
  s += "    #pragma unroll\n    for (int kk = 0; kk < " + str(cfg.bk / 16) + "; ++kk) {\n" +
       mmaStep() + "    }\n  }\n";
  s += "  fz_cp_wait<0>();\n";
  if (cfg.splitK > 1) {
    // Partials, then the last block of the tile sums them.
    int64_t planes = shape.batch * shape.m * shape.n;
    int64_t counterBytes = 256 * ((tilesM * tilesN * shape.batch * 4 + 255) / 256);
    s += "  float *fz_part = reinterpret_cast<float *>(fz_scratch + " + str(counterBytes) + ");\n";
    s += "  __shared__ bool fz_last;\n";
    std::string each =
        "  #pragma unroll\n  for (int i = 0; i < " + str(mi) + "; ++i)\n  #pragma unroll\n"
        "  for (int j = 0; j < " + str(ni) + "; ++j)\n  #pragma unroll\n"
        "  for (int h = 0; h < 2; ++h) {\n"
        "    const int fz_em = fz_m0 + fz_wm + i * 16 + lane / 4 + h * 8;\n"
        "    const int fz_en = fz_n0 + fz_wn + j * 8 + (lane % 4) * 2;\n"
        "    if (fz_em >= " + str(shape.m) + " || fz_en >= " + str(shape.n) + ") continue;\n"
        "    const long long fz_o = ((long long)fz_b * " + str(shape.m) + " + fz_em) * " +
        str(shape.n) + " + fz_en;\n";
    s += each + "    for (int l = 0; l < 2; ++l)\n      if (fz_en + l < " + str(shape.n) +
         ") fz_part[(long long)blockIdx.y * " + str(planes) +
         " + fz_o + l] = acc[i][j][2 * h + l];\n  }\n";
    s += lastBlockHandshake("  ",
                            "reinterpret_cast<unsigned *>(fz_scratch) + fz_b * " +
                                str(tilesM * tilesN) + " + fz_tm * " + str(tilesN) + " + fz_tn",
                            "gridDim.y", "return;");
    // The split count is known here: an unrolled sum lets a thread's loads
    // of every split be in flight at once. A loop over gridDim.y makes each
    // load wait for the one before, ~16 accumulators x splits L2 round trips
    // in a row at the end of every tile.
    s += each + "    for (int l = 0; l < 2; ++l) {\n      float t = 0.f;\n"
         "      if (fz_en + l < " + str(shape.n) + ") {\n"
         "        #pragma unroll" + (cfg.splitK > 16 ? std::string(" 16") : std::string()) +
         "\n        for (int sp = 0; sp < " + str(cfg.splitK) + "; ++sp)\n"
         "          t += __ldcg(&fz_part[(long long)sp * " + str(planes) +
         " + fz_o + l]);\n      }\n      acc[i][j][2 * h + l] = t;\n    }\n  }\n";
  }
  if (rowStats) {
    RowStatsLayout l;
    l.slices = mi;
    l.pairs = ni;
    l.warpsN = cfg.bn / cfg.wn;
    l.threads = threads;
    l.acc = "acc[i][j][2 * h + l]";
    l.row = "fz_m0 + fz_wm + i * 16 + lane / 4 + h * 8";
    l.tileRow = "fz_wm + i * 16 + lane / 4 + h * 8";
    l.col = "fz_n0 + fz_wn + j * 8 + (lane % 4) * 2 + l";
    l.warpN = "warp % " + str(l.warpsN);
    l.thread = "threadIdx.x";
    l.warp = "warp";
    l.sync = "__syncthreads();";
    l.leader = "threadIdx.x == 0";
    l.indent = "  ";
    s += "  __shared__ bool fz_last;\n";
    s += rowStatsEpilogue(l);
    s += "#undef fz_As\n#undef fz_Bs\n";
    text.body = s;
    return text;
  }
  // Epilogue: per accumulator pair.
  stagedStore = stagingFits();
  if (stagedStore) {
    s += "  __syncthreads();  // the stages are free: output tiles go there\n";
    for (unsigned o = 0; o < fusion.getNumResults(); ++o) {
      std::string t = storageType(dtypeOf(fusion.getResult(o)));
      s += "  " + t + " *const fz_out" + str(o) + "_tile = reinterpret_cast<" + t +
           " *>(fz_dyn + " + str(stagedOffset(o)) + ");\n";
    }
  }
  s += "  // epilogue, in registers\n";
  s += "  #pragma unroll\n  for (int i = 0; i < " + str(mi) + "; ++i)\n";
  s += "    #pragma unroll\n    for (int j = 0; j < " + str(ni) + "; ++j)\n";
  s += "      #pragma unroll\n      for (int h = 0; h < 2; ++h) {\n";
  s += pairEpilogue("fz_m0 + fz_wm + i * 16 + lane / 4 + h * 8",
                    "fz_n0 + fz_wn + j * 8 + (lane % 4) * 2", "acc[i][j][2 * h]",
                    "acc[i][j][2 * h + 1]") +
       "      }\n";
  if (stagedStore)
    s += stagedCopyOut();
  s += "#undef fz_As\n#undef fz_Bs\n";
  text.body = s;
  return text;
}

std::string GemmGen::tileOrder(const std::string &pid, const std::string &in) const {
  // Groups of 8 tile rows, column-major inside a group: neighbouring blocks
  // share operand tiles in L2.
  int64_t tilesM = (shape.m + cfg.bm - 1) / cfg.bm, tilesN = this->tilesN();
  std::string s;
  s += in + "const int fz_pid = " + pid + ", fz_group = fz_pid / (8 * " + str(tilesN) + ");\n";
  s += in + "const int fz_first = fz_group * 8, fz_gsize = min(" + str(tilesM) +
       " - fz_first, 8);\n";
  s += in + "const int fz_tm = fz_first + (fz_pid % (8 * " + str(tilesN) + ")) % fz_gsize;\n";
  s += in + "const int fz_tn = (fz_pid % (8 * " + str(tilesN) + ")) / fz_gsize;\n";
  if (parts.empty()) {
    s += in + "const int fz_m0 = fz_tm * " + str(cfg.bm) + ", fz_n0 = fz_tn * " + str(cfg.bn) +
         ";\n";
    return s;
  }
  // The tile column's part, and the column within it.
  PartOf p = partOf("fz_tn", cfg.bn);
  s += in + "const int fz_part = " + p.part + ";  // which product this tile belongs to\n";
  s += in + "const int fz_m0 = fz_tm * " + str(cfg.bm) + ", fz_n0 = (fz_tn - (" + p.first +
       ")) * " + str(cfg.bn) + ";\n";
  s += in + "const int fz_nlim = " + p.width + ";  // the part's N\n";
  return s;
}

int64_t GemmGen::tilesN() const { return unitsAlongN(cfg.bn); }

int64_t GemmGen::unitsAlongN(int64_t unit) const {
  if (parts.empty())
    return (shape.n + unit - 1) / unit;
  int64_t t = 0;
  for (const Part &p : parts)
    t += (p.n + unit - 1) / unit;
  return t;
}

GemmGen::PartOf GemmGen::partOf(const std::string &index, int64_t unit) const {
  // Each part's blocks follow the ones before.
  PartOf r{"0", "0", str(parts[0].n)};
  int64_t first = 0;
  for (size_t p = 1; p < parts.size(); ++p) {
    first += (parts[p - 1].n + unit - 1) / unit;
    std::string at = index + " >= " + str(first);
    r.part = at + " ? " + str(p) + " : " + r.part;
    r.first = at + " ? " + str(first) + " : " + r.first;
    r.width = at + " ? " + str(parts[p].n) + " : " + r.width;
  }
  return r;
}

std::string GemmGen::partMap(const std::string &base) const {
  if (parts.empty())
    return "&" + base;
  std::string s = "&" + base;
  for (size_t p = 1; p < parts.size(); ++p)
    s = "fz_part == " + str(p) + " ? &" + base + str(p + 1) + " : " + s;
  return "(" + s + ")";
}

std::string GemmGen::batchIndices(const std::string &indent) const {
  std::string s, rest = "fz_b";
  for (int d = (int)batchShape.size() - 1; d >= 0; --d) {
    s += indent + "const int fz_bi" + str(d) + " = " +
         (d == 0 ? rest : rest + " % " + str(batchShape[d])) + ";\n";
    rest = "(" + rest + " / " + str(batchShape[d]) + ")";
  }
  return s;
}

} // namespace fusec::codegen::detail
