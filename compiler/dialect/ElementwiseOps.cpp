//===- ElementwiseOps.cpp - verifiers of elementwise ops and traits -------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec {

LogicalResult OpTrait::verifyBroadcasting(Operation *op) {
  std::vector<shape::Shape> shapes;
  for (Value v : op->getOperands()) {
    ArrayRef<int64_t> s = shapeOf(v);
    shapes.emplace_back(s.begin(), s.end());
  }
  shape::Shape out;
  if (std::string err = shape::broadcast(shapes, out); !err.empty())
    return op->emitOpError("operand ") << err;
  ArrayRef<int64_t> result = shapeOf(op->getResult(0));
  if (ArrayRef<int64_t>(out) != result)
    return op->emitOpError("result shape ")
           << shape::str(result) << " differs from the broadcast shape "
           << shape::str(out);
  return success();
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

LogicalResult WhereOp::verify() {
  Type et = getResult().getType().getElementType();
  if (getLhs().getType().getElementType() != et ||
      getRhs().getType().getElementType() != et)
    return emitOpError("lhs, rhs and result must have one element type, got ")
           << getLhs().getType().getElementType() << ", "
           << getRhs().getType().getElementType() << " and " << et;
  return success();
}

LogicalResult IotaOp::verify() {
  int64_t rank = getResult().getType().getRank();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= rank)
    return emitOpError("dim ") << dim << " is out of range for rank " << rank;
  return success();
}

} // namespace fusec
