//===- CompositeOps.cpp - verifiers of composite ops ----------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/shape/ShapeRules.h"

using namespace mlir;

namespace fusec {
namespace {

LogicalResult expectShape(Operation *op, StringRef what, Value v,
                          ArrayRef<int64_t> expected) {
  if (shapeOf(v) != expected)
    return op->emitOpError(what) << " has shape " << shape::str(shapeOf(v))
                                 << ", expected " << shape::str(expected);
  return success();
}

LogicalResult expectSameElementType(Operation *op, StringRef what, Value v, Value ref) {
  Type a = getElementTypeOrSelf(v.getType()), b = getElementTypeOrSelf(ref.getType());
  if (a != b)
    return op->emitOpError(what) << " has element type " << a << ", expected " << b;
  return success();
}

} // namespace

LogicalResult verifyAxisOp(Operation *op, int64_t axis) {
  int64_t rank = shapeOf(op->getOperand(0)).size();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ") << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyAxisOp(*this, getAxis())))
    return failure();
  if (getResult().getType() != getInput().getType())
    return emitOpError("result type must equal the input type");
  ArrayRef<int64_t> normalized = shapeOf(getInput()).drop_front(getAxis());
  for (auto [name, v] : {std::pair<StringRef, Value>{"weight", getWeight()},
                         {"bias", getBias()}}) {
    if (!v)
      continue;
    if (failed(expectShape(*this, name, v, normalized)) ||
        failed(expectSameElementType(*this, name, v, getInput())))
      return failure();
  }
  return success();
}

LogicalResult ArgMaxOp::verify() {
  shape::Shape out;
  std::string err =
      shape::reduce(shapeOf(getInput()), {static_cast<int64_t>(getAxis())}, getKeepdims(), out);
  if (err.empty() && shapeOf(getInput())[size_t(getAxis())] == 0)
    err = "argmax over an empty dim";
  if (!err.empty())
    return emitOpError(err);
  if (llvm::ArrayRef<int64_t>(out) != shapeOf(getResult()))
    return emitOpError("result shape must be the input's reduced over axis");
  return success();
}

LogicalResult TopKOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  const int64_t axis = getAxis(), k = getK();
  if (axis < 0 || axis >= static_cast<int64_t>(in.size()))
    return emitOpError("axis ") << axis << " is out of range for rank " << in.size();
  if (k < 1 || k > in[size_t(axis)])
    return emitOpError("k = ") << k << " must be in [1, " << in[size_t(axis)]
                               << "], the size of dim " << axis;
  if (k > kMaxTopK)
    return emitOpError("k = ") << k << " is more than the " << kMaxTopK << " fusec's topk takes";
  SmallVector<int64_t> out(in.begin(), in.end());
  out[size_t(axis)] = k;
  if (ArrayRef<int64_t>(out) != shapeOf(getResult()))
    return emitOpError("result shape must be the input's with dim ") << axis << " of size k";
  Type want = getIndices() ? Type(IntegerType::get(getContext(), 64))
                           : cast<RankedTensorType>(getInput().getType()).getElementType();
  if (cast<RankedTensorType>(getResult().getType()).getElementType() != want)
    return emitOpError(getIndices() ? "indices must be i64"
                                    : "values must have the input's element type");
  return success();
}

LogicalResult RmsNormOp::verify() {
  if (getResult().getType() != getInput().getType())
    return emitOpError("result type must equal the input type");
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (in.empty())
    return emitOpError("input must have rank >= 1");
  if (getWeight() && (failed(expectShape(*this, "weight", getWeight(), in.back())) ||
                      failed(expectSameElementType(*this, "weight", getWeight(),
                                                   getInput()))))
    return failure();
  return success();
}

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  if (in.empty() || w.size() != 2)
    return emitOpError("expects input [..., in] and weight [out, in], got ")
           << shape::str(in) << " and " << shape::str(w);
  if (w[1] != in.back())
    return emitOpError("weight [out, in] = ")
           << shape::str(w) << " does not match input features " << in.back();
  if (failed(expectSameElementType(*this, "weight", getWeight(), getInput())))
    return failure();
  if (getBias() && (failed(expectShape(*this, "bias", getBias(), w[0])) ||
                    failed(expectSameElementType(*this, "bias", getBias(), getInput()))))
    return failure();
  shape::Shape out(in.begin(), in.end());
  out.back() = w[0];
  if (failed(expectSameElementType(*this, "result", getResult(), getInput())))
    return failure();
  return expectShape(*this, "result", getResult(), out);
}

LogicalResult AttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  if (q.size() < 2 || k.size() < 2 || v.size() < 2)
    return emitOpError("query, key and value need rank >= 2");
  if (q.back() != k.back())
    return emitOpError("query and key head dims differ: ") << q.back() << " vs " << k.back();
  if (k[k.size() - 2] != v[v.size() - 2])
    return emitOpError("key and value sequence lengths differ: ")
           << k[k.size() - 2] << " vs " << v[v.size() - 2];
  for (auto [name, val] : {std::pair<StringRef, Value>{"key", getKey()}, {"value", getValue()}})
    if (failed(expectSameElementType(*this, name, val, getQuery())))
      return failure();
  shape::Shape batch;
  std::string err = shape::broadcast(
      {shape::Shape(q.begin(), q.end() - 2), shape::Shape(k.begin(), k.end() - 2),
       shape::Shape(v.begin(), v.end() - 2)},
      batch);
  if (!err.empty())
    return emitOpError("batch dimensions: ") << err;
  int64_t L = q[q.size() - 2], S = k[k.size() - 2];
  if (Value mask = getMask()) {
    Type mt = getElementTypeOrSelf(mask.getType());
    if (!mt.isSignlessInteger(1) && mt != getElementTypeOrSelf(getQuery().getType()))
      return emitOpError("mask must be i1 or have the query element type, got ") << mt;
    shape::Shape scores = batch;
    scores.push_back(L);
    scores.push_back(S);
    if (std::string e = shape::broadcastTo(shapeOf(mask), scores); !e.empty())
      return emitOpError("mask: ") << e;
  }
  shape::Shape out = batch;
  out.push_back(L);
  out.push_back(v.back());
  if (failed(expectSameElementType(*this, "result", getResult(), getQuery())))
    return failure();
  return expectShape(*this, "result", getResult(), out);
}

} // namespace fusec
