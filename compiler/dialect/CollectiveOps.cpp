//===- CollectiveOps.cpp - verifiers of the collectives -------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec {
namespace {

LogicalResult verifyRanks(Operation *op, int64_t ranks) {
  if (ranks < 2 || ranks > kMaxRanks)
    return op->emitOpError("ranks must be 2..") << kMaxRanks << ", got " << ranks;
  return success();
}

/// all_gather (grow) and reduce_scatter (shrink): the result is the input
/// with dim `axis` multiplied or divided by `ranks`.
LogicalResult verifyAlongAxis(Operation *op, int64_t axis, int64_t ranks, bool grow) {
  if (failed(verifyRanks(op, ranks)) || failed(verifyAxisOp(op, axis)))
    return failure();
  shape::Shape expected(shapeOf(op->getOperand(0)));
  int64_t &d = expected[size_t(axis)];
  if (!grow && d % ranks != 0)
    return op->emitOpError("dim ") << axis << " (" << d << ") is not a multiple of ranks ("
                                   << ranks << ")";
  d = grow ? d * ranks : d / ranks;
  if (shapeOf(op->getResult(0)) != ArrayRef<int64_t>(expected))
    return op->emitOpError("result shape ")
           << shape::str(shapeOf(op->getResult(0))) << " differs from the inferred shape "
           << shape::str(expected);
  if (cast<RankedTensorType>(op->getResult(0).getType()).getElementType() !=
      cast<RankedTensorType>(op->getOperand(0).getType()).getElementType())
    return op->emitOpError("result element type differs from the input's");
  return success();
}

} // namespace

std::optional<int64_t> shardAxis(func::FuncOp func, unsigned i) {
  if (auto a = func.getArgAttrOfType<IntegerAttr>(i, kShardAttr))
    return a.getInt();
  return std::nullopt;
}

std::optional<int64_t> resultShardAxis(func::FuncOp func, unsigned i) {
  if (auto a = func.getResultAttrOfType<IntegerAttr>(i, kShardAttr))
    return a.getInt();
  return std::nullopt;
}

int64_t programRanks(func::FuncOp func) {
  auto a = func->getAttrOfType<IntegerAttr>(kRanksAttr);
  return a ? a.getInt() : 1;
}

LogicalResult AllReduceOp::verify() {
  if (getKind() != "sum" && getKind() != "max" && getKind() != "min")
    return emitOpError("kind must be sum, max or min, got '") << getKind() << "'";
  return verifyRanks(*this, getRanks());
}

LogicalResult AllGatherOp::verify() {
  return verifyAlongAxis(*this, getAxis(), getRanks(), /*grow=*/true);
}

LogicalResult ReduceScatterOp::verify() {
  return verifyAlongAxis(*this, getAxis(), getRanks(), /*grow=*/false);
}

} // namespace fusec
