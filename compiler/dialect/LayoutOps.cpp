//===- LayoutOps.cpp - verifiers of reductions, layout ops and matmul -----===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec {
namespace {

/// Reports a shape-rule error, or a mismatch between the inferred and the stated shape.
LogicalResult checkInferred(Operation *op, const std::string &err,
                            ArrayRef<int64_t> inferred) {
  if (!err.empty())
    return op->emitOpError(err);
  ArrayRef<int64_t> stated = shapeOf(op->getResult(0));
  if (inferred != stated)
    return op->emitOpError("result shape ")
           << shape::str(stated) << " differs from the inferred shape "
           << shape::str(inferred);
  return success();
}

} // namespace

LogicalResult verifyReduceOp(Operation *op) {
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  auto keep = op->getAttrOfType<BoolAttr>("keepdims");
  shape::Shape out;
  std::string err =
      shape::reduce(shapeOf(op->getOperand(0)), axes, keep && keep.getValue(), out);
  return checkInferred(op, err, out);
}

LogicalResult ReshapeOp::verify() {
  int64_t in = shape::numElements(shapeOf(getInput()));
  int64_t out = shape::numElements(shapeOf(getResult()));
  if (in != out)
    return emitOpError("cannot reshape ")
           << shape::str(shapeOf(getInput())) << " (" << in << " elements) to "
           << shape::str(shapeOf(getResult())) << " (" << out << " elements)";
  return success();
}

LogicalResult TransposeOp::verify() {
  shape::Shape out;
  std::string err = shape::transpose(shapeOf(getInput()), getPerm(), out);
  return checkInferred(*this, err, out);
}

LogicalResult BroadcastToOp::verify() {
  std::string err = shape::broadcastTo(shapeOf(getInput()), shapeOf(getResult()));
  if (!err.empty())
    return emitOpError(err);
  return success();
}

LogicalResult SliceOp::verify() {
  shape::SliceSpec spec{std::vector<int64_t>(getStarts().begin(), getStarts().end()),
                        std::vector<int64_t>(getLimits().begin(), getLimits().end()),
                        std::vector<int64_t>(getSteps().begin(), getSteps().end())};
  shape::Shape out;
  std::string err = shape::slice(shapeOf(getInput()), spec, out);
  return checkInferred(*this, err, out);
}

LogicalResult ConcatOp::verify() {
  std::vector<shape::Shape> shapes;
  for (Value v : getInputs())
    shapes.emplace_back(shapeOf(v).begin(), shapeOf(v).end());
  shape::Shape out;
  std::string err = shape::concat(shapes, getAxis(), out);
  return checkInferred(*this, err, out);
}

LogicalResult GatherOp::verify() {
  if (getResult().getType().getElementType() != getData().getType().getElementType())
    return emitOpError("result element type differs from the data's");
  // Stored counted from the front: the passes and kernels index by it.
  if (static_cast<int64_t>(getAxis()) < 0)
    return emitOpError("axis ") << static_cast<int64_t>(getAxis())
                                << " is negative; it is stored as 0..rank-1";
  shape::Shape out;
  std::string err = shape::gather(shapeOf(getData()), shapeOf(getIndices()), getAxis(), out);
  return checkInferred(*this, err, out);
}

LogicalResult MatmulOp::verify() {
  shape::Shape out;
  std::string err = shape::matmul(shapeOf(getLhs()), shapeOf(getRhs()), out);
  return checkInferred(*this, err, out);
}

} // namespace fusec
