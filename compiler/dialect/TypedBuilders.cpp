//===- TypedBuilders.cpp - build fusec ops with inferred result types -----===//
#include "compiler/dialect/TypedBuilders.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

namespace fusec {

void TypedBuilder::check(const std::string &err) {
  if (!err.empty())
    llvm::report_fatal_error(llvm::Twine("internal error: TypedBuilder: ") + err);
}

RankedTensorType TypedBuilder::broadcastType(std::initializer_list<Value> vs, Type elt) {
  std::vector<shape::Shape> shapes;
  for (Value v : vs)
    shapes.emplace_back(shapeOf(v).begin(), shapeOf(v).end());
  shape::Shape out;
  check(shape::broadcast(shapes, out));
  return tensorType(out, elt);
}

Value TypedBuilder::where(Value cond, Value lhs, Value rhs) {
  return b.create<WhereOp>(loc, broadcastType({cond, lhs, rhs}, elementType(lhs)), cond,
                           lhs, rhs);
}

Value TypedBuilder::cast(Value x, Type elt) {
  return b.create<CastOp>(loc, tensorType(shapeOf(x), elt), x);
}

Value TypedBuilder::constant(double value, Type elt, ArrayRef<int64_t> shape) {
  return b.create<ConstantOp>(loc, tensorType(shape, elt), b.getF64FloatAttr(value));
}

Value TypedBuilder::iota(int64_t dim, Type elt, ArrayRef<int64_t> shape) {
  return b.create<IotaOp>(loc, tensorType(shape, elt), b.getI64IntegerAttr(dim));
}

Value TypedBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  shape::Shape out;
  check(shape::transpose(shapeOf(x), perm, out));
  return b.create<TransposeOp>(loc, tensorType(out, elementType(x)), x,
                               b.getDenseI64ArrayAttr(perm));
}

Value TypedBuilder::transposeLast2(Value x) {
  SmallVector<int64_t> perm;
  int64_t rank = shapeOf(x).size();
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(x, perm);
}

Value TypedBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  return b.create<ReshapeOp>(loc, tensorType(shape, elementType(x)), x);
}

Value TypedBuilder::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  check(shape::broadcastTo(shapeOf(x), shape));
  return b.create<BroadcastToOp>(loc, tensorType(shape, elementType(x)), x);
}

Value TypedBuilder::slice(Value x, const shape::SliceSpec &spec) {
  shape::Shape out;
  check(shape::slice(shapeOf(x), spec, out));
  return b.create<SliceOp>(loc, tensorType(out, elementType(x)), x,
                           b.getDenseI64ArrayAttr(spec.starts),
                           b.getDenseI64ArrayAttr(spec.limits),
                           b.getDenseI64ArrayAttr(spec.steps));
}

Value TypedBuilder::concat(ValueRange xs, int64_t axis) {
  std::vector<shape::Shape> shapes;
  for (Value v : xs)
    shapes.emplace_back(shapeOf(v).begin(), shapeOf(v).end());
  shape::Shape out;
  check(shape::concat(shapes, axis, out));
  return b.create<ConcatOp>(loc, tensorType(out, elementType(xs.front())), xs,
                            b.getI64IntegerAttr(axis));
}

Value TypedBuilder::gather(Value data, Value indices, int64_t axis) {
  shape::Shape out;
  check(shape::gather(shapeOf(data), shapeOf(indices), axis, out));
  int64_t a = 0;  // stored non-negative
  check(shape::normalizeAxis(axis, static_cast<int64_t>(shapeOf(data).size()), a));
  return b.create<GatherOp>(loc, tensorType(out, elementType(data)), data, indices,
                            b.getI64IntegerAttr(a));
}

Value TypedBuilder::matmul(Value lhs, Value rhs) {
  shape::Shape out;
  check(shape::matmul(shapeOf(lhs), shapeOf(rhs), out));
  return b.create<MatmulOp>(loc, tensorType(out, elementType(lhs)), lhs, rhs);
}

} // namespace fusec
