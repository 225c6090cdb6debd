//===- InPlaceOutputs.cpp - graph outputs that are another result reshaped -===//
#include "compiler/pipeline/InPlaceOutputs.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace fusec {

namespace {

/// Whether the group's body only reshapes its one input into its one result.
bool onlyReshapes(FusionOp f) {
  if (f.getInputs().size() != 1 || f->getNumResults() != 1)
    return false;
  Value v = f.getYield().getValues().front();
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r->getOperand(0);
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &f.getBodyBlock())
    return false;
  for (Operation &op : f.getBodyBlock().without_terminator())
    if (!isa<ReshapeOp>(op))
      return false;
  return true;
}

} // namespace

llvm::DenseMap<Operation *, Value> outputsWrittenInPlace(func::FuncOp func) {
  llvm::DenseMap<Operation *, Value> elided;
  Operation *ret = func.getBody().front().getTerminator();
  llvm::DenseSet<Value> returned(ret->getOperands().begin(), ret->getOperands().end());
  llvm::DenseSet<Value> taken;  // results already writing an output
  for (auto f : func.getBody().front().getOps<FusionOp>()) {
    if (!onlyReshapes(f) || !returned.count(f->getResult(0)))
      continue;
    Value source = f.getInputs().front();
    // A kernel's result (an input buffer is the caller's; one that is an
    // output itself keeps its own), writing no other output yet.
    if (!source.getDefiningOp<FusionOp>() || returned.count(source) || !taken.insert(source).second)
      continue;
    elided[f] = source;
  }
  return elided;
}

} // namespace fusec
