//===- SplitWideConcats.cpp - -fusec-split-wide-concats -------------------===//
//
// A concat of more inputs than a kernel takes buffers (kMaxKernelBuffers)
// becomes rounds of concats of at most kConcatInputsPerKernel inputs along
// the same axis, each round joining the results of the one before.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "fusec-split-wide-concats"

namespace fusec {
#define GEN_PASS_DEF_FUSECSPLITWIDECONCATS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

/// `parts` joined along `axis`, in one concat (one value stays as it is).
Value join(OpBuilder &b, Location loc, ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts.front();
  auto first = cast<RankedTensorType>(parts.front().getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value p : parts)
    shape[axis] += cast<RankedTensorType>(p.getType()).getShape()[axis];
  return b.create<ConcatOp>(loc, RankedTensorType::get(shape, first.getElementType()), parts,
                            b.getI64IntegerAttr(axis));
}

struct SplitWideConcatsPass : impl::FusecSplitWideConcatsBase<SplitWideConcatsPass> {
  void runOnOperation() override {
    SmallVector<ConcatOp> wide;
    getOperation().walk([&](ConcatOp op) {
      if (static_cast<int64_t>(op.getInputs().size()) >= kMaxKernelBuffers)
        wide.push_back(op);
    });
    for (ConcatOp op : wide) {
      OpBuilder b(op);
      const int64_t axis = op.getAxis();
      SmallVector<Value> parts(op.getInputs().begin(), op.getInputs().end());
      while (static_cast<int64_t>(parts.size()) > kConcatInputsPerKernel) {
        SmallVector<Value> next;
        for (size_t i = 0; i < parts.size(); i += kConcatInputsPerKernel) {
          size_t n = std::min<size_t>(kConcatInputsPerKernel, parts.size() - i);
          next.push_back(join(b, op.getLoc(), ArrayRef<Value>(parts).slice(i, n), axis));
        }
        parts = std::move(next);
      }
      Value whole = join(b, op.getLoc(), parts, axis);
      op.getResult().replaceAllUsesWith(whole);
      op.erase();
    }
  }
};

} // namespace
} // namespace fusec
