//===- CloneIndexMath.cpp - -fusec-clone-index-math -----------------------===//
//
// Values computed from iotas, constants and one-element arguments alone (a
// causal mask's comparison of row and column indices; a padded program's key
// mask against its size) read no memory worth counting: every kernel that
// needs one computes it for free. CSE merges equal ones, though, so a model
// whose layers each build the same causal mask ends with one comparison read
// by every layer's attention, and a value with readers in several groups is
// written to memory and read back: each attention then reads a mask tensor
// instead of skipping the tiles above the diagonal. This pass gives each op
// that reads such index math (a reader) its own copy of the ops it reads
// (views and elementwise ops over those), where another reader reaches any
// of them, so each group holds its own. A reader's copies are made once for
// all of its operands, so shared sub-expressions cost one copy a reader.
//
// A matmul is no such reader: a product on cuBLASLt or the wgmma kernels
// reads its operands from memory, so a copy of its own would be one more
// kernel writing the same table; the matmuls share one. Nor is a cone of
// more than kMaxCopiedOps ops copied (a chain of index math read at every
// link would copy quadratically many); masks are a few ops.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

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
/// The most ops one reader's copy takes (a causal or padding mask is 2-6).
constexpr size_t kMaxCopiedOps = 64;

bool scalarArgument(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return isa<BlockArgument>(v) && t && t.hasStaticShape() && t.getNumElements() <= 1;
}

struct CloneIndexMathPass : impl::FusecCloneIndexMathBase<CloneIndexMathPass> {
  void runOnOperation() override {
    Region &region = getOperation().getBody();
    if (!region.hasOneBlock())
      return;
    Block &body = region.front();
    // Index math: ops computed from generators and one-element arguments
    // alone (operands come before their readers: one walk in order). Only
    // the non-generators are copied; generators are recomputed in place by
    // every group already.
    llvm::DenseMap<Operation *, bool> indexOnly;
    llvm::DenseMap<Operation *, size_t> position;
    std::vector<Operation *> order;
    for (Operation &op : body) {
      bool only = isGenerator(&op) ||
                  (op.getNumResults() == 1 && op.getNumRegions() == 0 &&
                   (isView(&op) || op.hasTrait<OpTrait::ElementwiseMap>()) &&
                   llvm::all_of(op.getOperands(), [&](Value v) {
                     Operation *d = v.getDefiningOp();
                     return d ? indexOnly.lookup(d) : scalarArgument(v);
                   }));
      indexOnly[&op] = only;
      position[&op] = order.size();
      order.push_back(&op);
    }
    auto copied = [&](Operation *op) { return op && indexOnly.lookup(op) && !isGenerator(op); };
    // The readers each copied op reaches through index math, up to two
    // (one more than decides anything).
    llvm::DenseMap<Operation *, SmallVector<Operation *, 2>> readers;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (!copied(*it))
        continue;
      SmallVector<Operation *, 2> &mine = readers[*it];
      auto add = [&](Operation *r) {
        if (mine.size() < 2 && !llvm::is_contained(mine, r))
          mine.push_back(r);
      };
      for (Operation *u : (*it)->getUsers()) {
        if (u->getBlock() == &body && copied(u)) {
          for (Operation *r : readers[u])
            add(r);
        } else {
          add(body.findAncestorOpInBlock(*u));
        }
      }
    }
    // Each reader whose index math another reader also reaches gets all of
    // it to itself, copied just ahead of it in operand order.
    llvm::SmallPtrSet<Operation *, 16> replaced;
    for (Operation *reader : order) {
      if (copied(reader) || isa<MatmulOp>(reader) || reader->getNumRegions() > 0)
        continue;
      // The reader's index math, each op once, in block order.
      std::vector<Operation *> cone;
      llvm::SmallPtrSet<Operation *, 16> seen;
      std::vector<Operation *> work;
      for (Value v : reader->getOperands())
        if (Operation *d = v.getDefiningOp(); copied(d) && seen.insert(d).second)
          work.push_back(d);
      bool shared = false;
      while (!work.empty()) {
        Operation *op = work.back();
        work.pop_back();
        cone.push_back(op);
        shared |= readers[op].size() > 1;
        for (Value v : op->getOperands())
          if (Operation *d = v.getDefiningOp(); copied(d) && seen.insert(d).second)
            work.push_back(d);
      }
      if (!shared || cone.size() > kMaxCopiedOps)
        continue;
      llvm::sort(cone, [&](Operation *a, Operation *b) { return position[a] < position[b]; });
      IRMapping copies;
      OpBuilder b(reader);
      for (Operation *op : cone) {
        // Named after its reader, whose graph node it now belongs to.
        Operation *copy = b.clone(*op, copies);
        copy->setLoc(reader->getLoc());
        replaced.insert(op);
      }
      for (OpOperand &use : reader->getOpOperands())
        if (Value c = copies.lookupOrNull(use.get()))
          use.set(c);
    }
    // The originals every reader now has a copy of.
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (replaced.contains(*it) && (*it)->use_empty())
        (*it)->erase();
  }
};

} // namespace
} // namespace fusec
