//===- ReductionPhases.cpp - what the reduction kernel families share -----===//
#include "compiler/codegen/ReductionPhases.h"

using namespace mlir;

namespace fusec::codegen::detail {

bool isReduction(Operation *op) { return isa<SumOp, MeanOp, MaxOp, MinOp>(op); }

namespace {
/// Number of reductions on the longest path to `v`.
int level(Value v, std::map<void *, int> &memo) {
  auto it = memo.find(v.getAsOpaquePointer());
  if (it != memo.end())
    return it->second;
  int l = 0;
  if (Operation *op = v.getDefiningOp()) {
    for (Value o : op->getOperands())
      l = std::max(l, level(o, memo));
    l += isReduction(op) ? 1 : 0;
  }
  return memo[v.getAsOpaquePointer()] = l;
}
} // namespace

std::map<int, std::vector<Operation *>> reductionPhases(FusionOp fusion) {
  std::map<int, std::vector<Operation *>> phases;
  std::map<void *, int> memo;
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    if (isReduction(&op))
      phases[level(op.getResult(0), memo)].push_back(&op);
  return phases;
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

} // namespace fusec::codegen::detail
