//===- ReductionPhases.cpp - what the reduction kernel families share -----===//
#include "compiler/codegen/ReductionPhases.h"

#include "compiler/codegen/KernelSpec.h"
#include "compiler/codegen/ScalarOps.h"

#include <algorithm>

using namespace mlir;

namespace fusec::codegen::detail {

bool isReduction(Operation *op) { return isa<SumOp, MeanOp, MaxOp, MinOp>(op); }

namespace {
/// Number of reductions on the longest path to `v`; an online sum counts
/// from its max's operand, beside the max.
int level(Value v, const OnlineSums &online, std::map<void *, int> &memo) {
  auto it = memo.find(v.getAsOpaquePointer());
  if (it != memo.end())
    return it->second;
  int l = 0;
  if (Operation *op = v.getDefiningOp()) {
    auto sum = online.find(op);
    if (sum != online.end())
      l = level(sum->second->getOperand(0), online, memo);
    else
      for (Value o : op->getOperands())
        l = std::max(l, level(o, online, memo));
    l += isReduction(op) ? 1 : 0;
  }
  return memo[v.getAsOpaquePointer()] = l;
}

bool isF32(Value v) { return dtypeOf(v) == DType::F32; }
} // namespace

OnlineSums onlineSums(FusionOp fusion) {
  OnlineSums sums;
  for (Operation &op : fusion.getBodyBlock().without_terminator()) {
    if (!isa<SumOp>(op) || !isF32(op.getResult(0)))
      continue;
    Value e = op.getOperand(0);
    Operation *max = shiftedExpMax(e);
    // The exponent and its difference in f32: the pass then computes what
    // the phases would, up to the order of the additions.
    if (max && isF32(e) && isF32(e.getDefiningOp()->getOperand(0)) && isF32(max->getOperand(0)) &&
        max->getParentOp() == fusion.getOperation())
      sums[&op] = max;
  }
  return sums;
}

std::map<int, std::vector<Operation *>> reductionPhases(FusionOp fusion, const OnlineSums &online) {
  std::map<int, std::vector<Operation *>> phases;
  std::map<void *, int> memo;
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    if (isReduction(&op))
      phases[level(op.getResult(0), online, memo)].push_back(&op);
  return phases;
}

bool readsOnce(FusionOp fusion) {
  if (reductionPhases(fusion).size() != 1)
    return false;
  ReductionDomain rd = reductionDomain(fusion);
  for (Value v : fusion.getYield().getValues())
    if (shapeOf(v) == ArrayRef<int64_t>(rd.domain))
      return false;
  return true;
}

ReductionDomain reductionDomain(FusionOp fusion) {
  ReductionDomain r;
  auto d = fusion->getAttrOfType<DenseI64ArrayAttr>("domain").asArrayRef();
  auto red = fusion->getAttrOfType<DenseI64ArrayAttr>("reduced_axes").asArrayRef();
  r.domain.assign(d.begin(), d.end());
  r.reduced.assign(red.begin(), red.end());
  for (int64_t i = 0; i < (int64_t)d.size(); ++i)
    if (!llvm::is_contained(red, i))
      r.kept.push_back(i);
  for (int64_t a : r.reduced)
    r.reducedCount *= d[a];
  for (int64_t a : r.kept)
    r.keptCount *= d[a];
  return r;
}

std::vector<std::string> columnIndexNames(size_t rank, ArrayRef<int64_t> reduced,
                                          ArrayRef<int64_t> kept) {
  std::vector<std::string> vars(rank);
  for (int64_t d : reduced)
    vars[d] = "r" + std::to_string(d);
  for (int64_t d : kept)
    vars[d] = "k" + std::to_string(d);
  return vars;
}

Operation *throughBroadcasts(Value v) {
  Operation *op = v.getDefiningOp();
  while (op && isa<BroadcastToOp>(op))
    op = op->getOperand(0).getDefiningOp();
  return op;
}

Operation *shiftedExpMax(Value v) {
  auto ex = v.getDefiningOp<ExpOp>();
  auto sub = ex ? ex->getOperand(0).getDefiningOp<SubOp>() : SubOp();
  if (!sub)
    return nullptr;
  Operation *m = throughBroadcasts(sub->getOperand(1));
  return m && isa<MaxOp>(m) && m->getOperand(0) == sub->getOperand(0) ? m : nullptr;
}

ElementEmitter::LoadHook columnLoads(std::vector<int64_t> reduced, int last, int64_t vec,
                                     CachedLoad cached) {
  return [reduced = std::move(reduced), last, vec, cached = std::move(cached)](
             ElementEmitter &em, BlockArgument arg, const Index &idx) -> std::string {
    ArrayRef<int64_t> shape = shapeOf(arg);
    std::string ptr = ElementEmitter::argName(arg.getArgNumber());
    bool alongRows = false;
    for (int64_t d : reduced) {
      std::optional<int64_t> c = em.coefficient(shape, idx, d);
      alongRows |= !c || *c != 0;
    }
    if (!alongRows || !em.vectorizable(shape, idx, last, vec))
      return "fz_load1(" + ptr + ", " + em.offset(shape, idx) + ")";
    return cached(arg, ptr, em.offsetAt(shape, idx, last, "kl"));
  };
}

namespace {
/// Row-major decomposition of the flat index `flat` over `dims` of `domain`,
/// one declaration per dim named by `name`.
std::string flatIndexDecls(ArrayRef<int64_t> domain, ArrayRef<int64_t> dims,
                           const std::string &flat, const std::string &indent,
                           const std::function<std::string(int64_t)> &name) {
  std::string s, rest = flat;
  for (int i = (int)dims.size() - 1; i >= 0; --i) {
    int64_t d = dims[i];
    s += indent + "const fz_idx " + name(d) + " = " +
         (i == 0 ? rest : rest + " % " + std::to_string(domain[d])) + ";\n";
    rest = "(" + rest + " / " + std::to_string(domain[d]) + ")";
  }
  return s;
}
} // namespace

std::string reducedIndexDecls(ArrayRef<int64_t> domain, ArrayRef<int64_t> reduced,
                              const std::string &row, const std::string &indent) {
  return flatIndexDecls(domain, reduced, row, indent,
                        [](int64_t d) { return "r" + std::to_string(d); });
}

std::string keptIndexDecls(ArrayRef<int64_t> domain, ArrayRef<int64_t> kept, int64_t last,
                           const std::string &indent) {
  return flatIndexDecls(domain, kept, "kb", indent, [last](int64_t d) {
    return d == last ? std::string("kl") : "k" + std::to_string(d);
  });
}

ColumnOutputCode columnOutputs(FusionOp fusion,
                               const std::function<ElementEmitter()> &makeEmitter,
                               ArrayRef<int64_t> domain, ArrayRef<int64_t> reduced, int last,
                               int64_t vec, const std::string &store) {
  auto str = [](int64_t v) { return std::to_string(v); };
  ElementEmitter e = makeEmitter();
  Index id = ElementEmitter::identity(domain.size());
  ColumnOutputCode c;
  unsigned o = 0;
  for (Value v : fusion.getYield().getValues()) {
    unsigned out = o++;
    std::string r = "o" + str(out);
    std::string type = computeType(dtypeOf(v)), storage = storageType(dtypeOf(v));
    if (shapeOf(v) == domain) {
      std::string val = e.emit(v, id);
      c.lanes += e.takeCode() + "          " + r + "[l] = " + val + ";\n";
      c.decls += "      " + type + " " + r + "[" + str(vec) + "];\n";
      c.post += "      if (active) " + store + "<" + storage + ", " + str(vec) + ">(out" + str(out) +
                ", " + e.offsetAt(domain, id, last, "kl") + ", " + r + ");\n";
      continue;
    }
    // One value per column: kept dims only, or D with the reduced dims 1.
    ElementEmitter pc = makeEmitter();
    Index idx;
    ArrayRef<int64_t> s = shapeOf(v);
    for (size_t d = 0; d < domain.size(); ++d)
      if (!llvm::is_contained(reduced, (int64_t)d))
        idx.push_back(IndexExpr::domain(d));
      else if (s.size() == domain.size())
        idx.push_back(IndexExpr::constant(0));
    std::string val = pc.emit(v, idx);
    c.perColumn += "      " + type + " " + r + "[" + str(vec) + "];\n      #pragma unroll\n"
                   "      for (int l = 0; l < " + str(vec) + "; ++l) {\n        const fz_idx k" +
                   str(last) + " = kl + l;\n" + pc.takeCode() + "        " + r + "[l] = " + val +
                   ";\n      }\n      " + store + "<" + storage + ", " + str(vec) + ">(out" +
                   str(out) + ", kbase, " + r + ");\n";
  }
  return c;
}

ColumnTile columnTile(FusionOp fusion, const ReductionDomain &rd) {
  ColumnTile t;
  int64_t bytes = maxElementBytes(fusion);
  t.vec = 16 / bytes;
  while (t.vec > 1 && rd.domain.back() % t.vec != 0)
    t.vec /= 2;
  t.tx = std::max<int64_t>(1, 64 / (t.vec * bytes));
  while (t.tx > 1 && t.tx * t.vec > rd.keptCount)
    t.tx /= 2;
  return t;
}

} // namespace fusec::codegen::detail
