//===- ColumnReductionKernel.cpp - reductions over the outer dims ---------===//
//
// For reductions whose reduced dims lead and whose kept dims are contiguous
// (softmax over dim 0): a block owns a tile of TX x VEC adjacent columns and
// TY threads walk down the reduced rows, each thread keeping VEC column
// accumulators. Partial results meet in shared memory. Every phase re-reads
// its tile; tiles are narrow (32 bytes of a row) so that the tiles in flight
// are meant to stay in L2 between phases (on an H100 they mostly do not: 30%
// of copy bandwidth for softmax over dim 0; see CooperativeColumnKernel.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ElementEmitter.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/codegen/ScalarOps.h"
#include "compiler/shape/ShapeRules.h"

#include <algorithm>
#include <map>

using namespace mlir;

namespace fusec::codegen::detail {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

struct ColumnPlan {
  FusionOp fusion;
  std::vector<int64_t> domain, reduced, kept;
  int64_t rr = 1, kc = 1, vec = 1, tx = 1, ty = 128;
  int last = 0;
  std::map<Operation *, std::string> reductionVars;
  int counter = 0;

  ElementEmitter emitter() {
    ElementEmitter e(fusion, columnIndexNames(domain.size(), reduced, kept), "          ");
    e.reduced = [this](Operation *op) { return reductionVars.at(op) + "[l]"; };
    return e;
  }

  /// Indices of the reduced dims from "rr" and of the kept dims from "kb".
  std::string indices(bool reducedDims, const std::string &in) const {
    return reducedDims ? reducedIndexDecls(domain, reduced, "rr", in)
                       : keptIndexDecls(domain, kept, last, in);
  }

  std::string rowLoop(const std::string &lanes, const std::string &post) const {
    std::string s = "    #pragma unroll 4\n    for (fz_idx rr = ty; rr < " + str(rr) + "; rr += " +
                    str(ty) + ") {\n" + indices(true, "      ");
    s += "      #pragma unroll\n      for (int l = 0; l < " + str(vec) + "; ++l) {\n";
    s += "        const fz_idx k" + str(last) + " = kl + l;\n" + lanes + "      }\n" + post +
         "    }\n";
    return s;
  }

  std::string phase(const std::vector<Operation *> &reds) {
    ElementEmitter e = emitter();
    std::string head, lanes, tail;
    for (Operation *op : reds) {
      ReductionRule rule = reductionRule(op);
      std::string acc = "acc" + str(counter++);
      head += "    " + rule.accType + " " + acc + "[" + str(vec) + "];\n    for (int l = 0; l < " +
              str(vec) + "; ++l) " + acc + "[l] = " + rule.identity + ";\n";
      std::string v = e.emit(op->getOperand(0), ElementEmitter::identity(domain.size()));
      lanes += e.takeCode() + "          " + acc + "[l] = " + rule.functor + "(" + acc + "[l], (" +
               rule.accType + ")" + v + ");\n";
      // Tree reduction over the TY threads of each column, in shared memory.
      std::string smem = rule.accType == "float" ? "fz_cf" : "fz_cl";
      std::string name = "red" + str(counter++);
      std::string type = computeType(dtypeOf(op->getResult(0)));
      tail += "    __syncthreads();\n    for (int l = 0; l < " + str(vec) + "; ++l) " + smem +
              "[ty][tx * " + str(vec) + " + l] = " + acc + "[l];\n";
      tail += "    for (int half = " + str(ty / 2) + "; half > 0; half >>= 1) {\n"
              "      __syncthreads();\n      if (ty < half)\n        for (int l = 0; l < " +
              str(vec) + "; ++l) " + smem + "[ty][tx * " + str(vec) + " + l] = " + rule.functor +
              "(" + smem + "[ty][tx * " + str(vec) + " + l], " + smem + "[ty + half][tx * " +
              str(vec) + " + l]);\n    }\n    __syncthreads();\n";
      tail += "    " + type + " " + name + "[" + str(vec) + "];\n    for (int l = 0; l < " +
              str(vec) + "; ++l) " + name + "[l] = (" + type + ")(" + smem + "[0][tx * " +
              str(vec) + " + l]" + (rule.isMean ? " / " + str(rr) + ".f" : "") + ");\n";
      reductionVars[op] = name;
    }
    return head + rowLoop(lanes, "") + tail;
  }

  std::string outputs() {
    ColumnOutputCode c = columnOutputs(
        fusion, [this] { return emitter(); }, domain, reduced, last, vec);
    std::string s;
    if (!c.lanes.empty()) {
      std::string loop = rowLoop(c.lanes, c.post);
      // Declarations go inside the row loop, before the lane loop.
      size_t at = loop.find("      #pragma unroll\n");
      loop.insert(at, c.decls);
      s += loop;
    }
    if (!c.perColumn.empty())
      s += "    if (active && ty == 0) {\n" + c.perColumn + "    }\n";
    return s;
  }
};

} // namespace

llvm::Expected<KernelSpec> generateColumnReduction(FusionOp fusion,
                                                   const DeviceProfile &profile) {
  ColumnPlan p;
  p.fusion = fusion;
  ReductionDomain rd = takeColumnDomain(p, fusion);
  // Tiles of 64 bytes per row and two blocks per SM measured best of
  // 32/64/128 bytes x 1/2/4 blocks (bench/NOTES.md). This is the fallback when
  // the cooperative kernel's chunk does not fit on chip: it re-reads per phase.
  ColumnTile tile = columnTile(fusion, rd);
  p.vec = tile.vec;
  p.tx = tile.tx;
  p.ty = 256 / p.tx;
  int64_t width = p.tx * p.vec, tiles = (p.kc + width - 1) / width;

  std::map<int, std::vector<Operation *>> byLevel = reductionPhases(fusion);

  KernelSpec spec;
  spec.name = fusion->getAttrOfType<StringAttr>("name").str();
  spec.family = "column_reduction";
  std::string src = "extern \"C\" __global__ void __launch_bounds__(256)\n" + spec.name + "(" +
                    parameterList(fusion) + ") {\n" + kAfterPrior;
  src += "  typedef " + std::string(indexType(fusion)) + " fz_idx;\n";
  src += "  __shared__ float fz_cf[" + str(p.ty) + "][" + str(width) + "];\n";
  bool intAcc = false;
  for (auto &[l, reds] : byLevel)
    for (Operation *op : reds)
      intAcc |= reductionRule(op).accType != "float";
  if (intAcc)
    src += "  __shared__ long long fz_cl[" + str(p.ty) + "][" + str(width) + "];\n";
  src += "  const int tx = threadIdx.x % " + str(p.tx) + ", ty = threadIdx.x / " + str(p.tx) +
         ";\n";
  src += "  for (fz_idx tile = blockIdx.x; tile < " + str(tiles) + "; tile += gridDim.x) {\n";
  src += "    const fz_idx kbase = (tile * " + str(p.tx) + " + tx) * " + str(p.vec) + ";\n";
  src += "    const bool active = kbase < " + str(p.kc) + ";\n";
  src += "    const fz_idx kb = active ? kbase : 0;  // compute on a valid column, store nothing\n";
  src += p.indices(false, "    ");
  for (auto &[l, reds] : byLevel)
    src += "    // phase " + str(l) + "\n" + p.phase(reds);
  src += "    // outputs\n" + p.outputs();
  src += "  }\n}\n";

  int64_t cap = static_cast<int64_t>(profile.smCount) * 2;
  spec.grid = static_cast<unsigned>(std::max<int64_t>(1, std::min(tiles, cap)));
  spec.block = 256;
  spec.source = src;
  spec.schedule = std::to_string(p.rr) + " reduced x " + std::to_string(p.kc) +
                  " kept; tiles of " + str(width) + " columns (" + str(p.tx) + " x vec " +
                  str(p.vec) + "), " + str(p.ty) + " threads down each; " +
                  str(spec.grid) + " blocks";
  return spec;
}

} // namespace fusec::codegen::detail
