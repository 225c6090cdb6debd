//===- CloneIndexMath.cpp - -fusec-clone-index-math -----------------------===//
//
// Values computed from iotas, constants and one-element arguments alone (a
// causal mask's comparison of row and column indices; a padded program's key
// mask against its size) read no memory worth counting: every kernel that
// needs one computes it for free. CSE merges equal ones, though, so a model
// whose layers each build the same causal mask ends with one comparison read
// by every layer's attention, and a value with readers in several groups is
// written to memory and read back: each attention then reads a mask tensor
// instead of skipping the tiles above the diagonal. This pass gives each
// reader of such a value its own copy of the ops that compute it (views and
// elementwise ops over those), so each group holds its own.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#define DEBUG_TYPE "fusec-clone-index-math"

namespace fusec {
#define GEN_PASS_DEF_FUSECCLONEINDEXMATH
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

/// A one-element argument (the size a padded program takes,
/// -fusec-pad-sizes): every thread reads it from the same 4 bytes, as free
/// as a constant.
bool scalarArgument(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return isa<BlockArgument>(v) && t && t.hasStaticShape() && t.getNumElements() <= 1;
}

struct CloneIndexMathPass : impl::FusecCloneIndexMathBase<CloneIndexMathPass> {
  void runOnOperation() override {
    // Whether an op computes from generators only (memoized; operands are
    // defined before their readers, so one walk in order decides them all).
    llvm::DenseMap<Operation *, bool> indexOnly;
    auto fromGenerators = [&](Operation *op) {
      if (isGenerator(op))
        return true;
      if (op->getNumResults() != 1 ||
          !(isView(op) || op->hasTrait<OpTrait::ElementwiseMap>()))
        return false;
      for (Value v : op->getOperands()) {
        Operation *d = v.getDefiningOp();
        if (d ? !indexOnly.lookup(d) : !scalarArgument(v))
          return false;
      }
      return true;
    };
    std::vector<Operation *> order;
    getOperation().walk([&](Operation *op) {
      if (op->getParentOp() != getOperation())
        return;
      indexOnly[op] = fromGenerators(op);
      order.push_back(op);
    });
    // Readers last to first: a copy made for a reader reads the copies its
    // own operands then get.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Operation *op = *it;
      if (!indexOnly.lookup(op) || isGenerator(op))
        continue;
      // The first reader in the block keeps the op; each later one gets a
      // copy just ahead of it, named after it (its graph node's).
      SmallVector<Operation *> readers;
      for (Operation *u : op->getUsers())
        if (!llvm::is_contained(readers, u))
          readers.push_back(u);
      llvm::sort(readers, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      for (size_t i = 1; i < readers.size(); ++i) {
        OpBuilder b(readers[i]);
        Operation *copy = b.clone(*op);
        copy->setLoc(readers[i]->getLoc());
        readers[i]->replaceUsesOfWith(op->getResult(0), copy->getResult(0));
      }
    }
  }
};

} // namespace
} // namespace fusec
