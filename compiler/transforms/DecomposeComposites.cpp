//===- DecomposeComposites.cpp - composite ops into primitive ops ---------===//
//
// Each rewrite mirrors the formula in Passes.td; reductions over one element
// per result become views of their input. Reductions keep their dims, so
// the statistics broadcast back over the rows they came from; fusion later
// recognises reduction -> broadcast -> pointwise chains on the same rows.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/TypedBuilders.h"
#include "compiler/shape/ShapeRules.h"
#include "compiler/transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

#define DEBUG_TYPE "fusec-decompose"

namespace fusec {
#define GEN_PASS_DEF_FUSECDECOMPOSE
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// softmax(x, a) => div(exp(sub(x, max(x, a))), sum(exp(sub(x, max(x, a))), a))
Value buildSoftmax(TypedBuilder &tb, Value x, int64_t axis) {
  Value m = tb.reduce<MaxOp>(x, {axis}, /*keepdims=*/true);
  Value e = tb.unary<ExpOp>(tb.binary<SubOp>(x, m));
  return tb.binary<DivOp>(e, tb.reduce<SumOp>(e, {axis}, true));
}

/// log_softmax(x, a) => sub(sub(x, max(x, a)), log(sum(exp(sub(x, max(x, a))), a)))
Value buildLogSoftmax(TypedBuilder &tb, Value x, int64_t axis) {
  Value d = tb.binary<SubOp>(x, tb.reduce<MaxOp>(x, {axis}, true));
  Value s = tb.reduce<SumOp>(tb.unary<ExpOp>(d), {axis}, true);
  return tb.binary<SubOp>(d, tb.unary<LogOp>(s));
}

/// rms_norm(x, w) => mul(mul(x, rsqrt(add(mean(mul(x, x), -1), eps))), w)
Value buildRmsNorm(TypedBuilder &tb, RmsNormOp op) {
  Value x = op.getInput();
  int64_t last = shapeOf(x).size() - 1;
  Value ms = tb.reduce<MeanOp>(tb.binary<MulOp>(x, x), {last}, true);
  Value eps = tb.constant(op.getEps().convertToDouble(), elementTypeOf(x));
  Value y = tb.binary<MulOp>(x, tb.unary<RsqrtOp>(tb.binary<AddOp>(ms, eps)));
  return op.getWeight() ? tb.binary<MulOp>(y, op.getWeight()) : y;
}

/// argmax's pick: min(where(x != x or x == m, iota(axis), n)), the first
/// index along `axis` holding m (or the first NaN), leaving out the elements
/// where `taken` (if given) is true.
Value firstPick(TypedBuilder &tb, Value x, Value m, Value taken, int64_t axis, bool keepdims) {
  ArrayRef<int64_t> s = shapeOf(x);
  MLIRContext *ctx = x.getContext();
  Type i64 = IntegerType::get(ctx, 64), i1 = IntegerType::get(ctx, 1);
  // One op a statement: the order of a call's arguments is the compiler's,
  // and the IR's order would be too.
  Value isMax = tb.compare<EqOp>(x, m);
  Value yes = tb.constant(1.0, i1, {});
  Value isNaN = tb.compare<NeOp>(x, x);
  Value hit = tb.where(isNaN, yes, isMax);
  if (taken)
    hit = tb.where(taken, tb.constant(0.0, i1, {}), hit);
  Value idx = tb.iota(axis, i64, s);
  Value none = tb.constant(double(s[size_t(axis)]), i64, {});
  return tb.reduce<MinOp>(tb.where(hit, idx, none), {axis}, keepdims);
}

/// argmax(x, axis): the first index holding the maximum (or the first NaN).
Value buildArgMax(TypedBuilder &tb, ArgMaxOp op) {
  Value x = op.getInput();
  const int64_t axis = op.getAxis();
  Value m = tb.reduce<MaxOp>(x, {axis}, true);
  return firstPick(tb, x, m, Value(), axis, op.getKeepdims());
}

/// topk(x, k, axis): k rounds of argmax's pick over the elements not yet
/// taken. Round r: m = max(where(taken, lowest, x)); the first untaken index
/// holding m (or an untaken NaN) is picked and taken. The values are the
/// rounds' maxima, the indices their picks, each concatenated along axis.
/// Taken elements are excluded from the pick by the mask itself, so a row of
/// -inf (or of the type's lowest integer) still gives k distinct indices.
/// (CSE merges the rounds' repeated iota and constants.)
Value buildTopK(TypedBuilder &tb, TopKOp op) {
  Value x = op.getInput();
  const int64_t axis = op.getAxis(), k = op.getK();
  Type elt = elementTypeOf(x);
  Type i64 = IntegerType::get(op.getContext(), 64), i1 = IntegerType::get(op.getContext(), 1);
  double lowest = -std::numeric_limits<double>::infinity();
  if (auto it = dyn_cast<IntegerType>(elt))
    lowest = -std::ldexp(1.0, int(it.getWidth()) - 1);  // the type's lowest value
  Value idx = tb.iota(axis, i64, shapeOf(x));
  Value taken;  // none before the first round
  SmallVector<Value> picked;
  for (int64_t r = 0; r < k; ++r) {
    Value open = taken ? tb.where(taken, tb.constant(lowest, elt, {}), x) : x;
    Value m = tb.reduce<MaxOp>(open, {axis}, true);
    Value first = firstPick(tb, x, m, taken, axis, true);
    picked.push_back(op.getIndices() ? first : m);
    if (r + 1 < k) {
      Value now = tb.compare<EqOp>(idx, first);
      taken = taken ? tb.where(now, tb.constant(1.0, i1, {}), taken) : now;
    }
  }
  return picked.size() == 1 ? picked.front() : tb.concat(picked, axis);
}

/// layer_norm(x, w, b) => add(mul(mul(d, rsqrt(add(mean(mul(d, d)), eps))), w), b)
///   where d = sub(x, mean(x)), means over dims axis..rank-1.
Value buildLayerNorm(TypedBuilder &tb, LayerNormOp op) {
  Value x = op.getInput();
  SmallVector<int64_t> axes;
  for (int64_t i = op.getAxis(), r = shapeOf(x).size(); i < r; ++i)
    axes.push_back(i);
  Value d = tb.binary<SubOp>(x, tb.reduce<MeanOp>(x, axes, true));
  Value var = tb.reduce<MeanOp>(tb.binary<MulOp>(d, d), axes, true);
  Value eps = tb.constant(op.getEps().convertToDouble(), elementTypeOf(x));
  Value y = tb.binary<MulOp>(d, tb.unary<RsqrtOp>(tb.binary<AddOp>(var, eps)));
  if (op.getWeight())
    y = tb.binary<MulOp>(y, op.getWeight());
  if (op.getBias())
    y = tb.binary<AddOp>(y, op.getBias());
  return y;
}

/// linear(x, w, b) => add(matmul(x, transpose(w)), b)
Value buildLinear(TypedBuilder &tb, LinearOp op) {
  Value y = tb.matmul(op.getInput(), tb.transpose(op.getWeight(), {1, 0}));
  return op.getBias() ? tb.binary<AddOp>(y, op.getBias()) : y;
}

/// sdpa(q, k, v) => matmul(softmax(mask(mul(matmul(q, transpose(k)), scale))), v)
/// A boolean mask selects (false -> -inf), a float mask is added; `causal`
/// selects with iota(rows) >= iota(cols) so no L x S mask is materialized.
Value buildAttention(TypedBuilder &tb, AttentionOp op) {
  Value q = op.getQuery();
  Type elt = elementTypeOf(q);
  int64_t headDim = shapeOf(q).back();
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt(static_cast<double>(headDim));
  Value s = tb.matmul(q, tb.transposeLast2(op.getKey()));
  s = tb.binary<MulOp>(s, tb.constant(scale, elt));
  Value negInf;
  if (op.getCausal() || (op.getMask() && elementTypeOf(op.getMask()).isSignlessInteger(1)))
    negInf = tb.constant(-std::numeric_limits<double>::infinity(), elt);
  if (Value mask = op.getMask()) {
    s = elementTypeOf(mask).isSignlessInteger(1) ? tb.where(mask, s, negInf)
                                                  : tb.binary<AddOp>(s, mask);
  }
  ArrayRef<int64_t> scores = shapeOf(s);
  int64_t rank = scores.size();
  if (op.getCausal()) {
    SmallVector<int64_t> ls{scores[rank - 2], scores[rank - 1]};
    Type i32 = tb.builder().getI32Type();
    // Built one at a time so the IR order does not depend on argument evaluation order.
    Value rows = tb.iota(0, i32, ls);
    Value cols = tb.iota(1, i32, ls);
    Value keep = tb.compare<GeOp>(rows, cols);
    s = tb.where(keep, s, negInf);
  }
  Value p = buildSoftmax(tb, s, rank - 1);
  return tb.matmul(p, op.getValue());
}

struct FusecDecomposePass : impl::FusecDecomposeBase<FusecDecomposePass> {
  void runOnOperation() override {
    SmallVector<Operation *> composites;
    getOperation().walk([&](Operation *op) {
      if (isComposite(op))
        composites.push_back(op);
    });
    for (Operation *op : composites) {
      OpBuilder b(op);
      TypedBuilder tb(b, op->getLoc());
      Value replacement =
          llvm::TypeSwitch<Operation *, Value>(op)
              .Case([&](SoftmaxOp o) { return buildSoftmax(tb, o.getInput(), o.getAxis()); })
              .Case([&](LogSoftmaxOp o) {
                return buildLogSoftmax(tb, o.getInput(), o.getAxis());
              })
              .Case([&](RmsNormOp o) { return buildRmsNorm(tb, o); })
              .Case([&](LayerNormOp o) { return buildLayerNorm(tb, o); })
              .Case([&](LinearOp o) { return buildLinear(tb, o); })
              .Case([&](ArgMaxOp o) { return buildArgMax(tb, o); })
              .Case([&](TopKOp o) { return buildTopK(tb, o); })
              .Case([&](AttentionOp o) { return buildAttention(tb, o); })
              .Default([](Operation *) { return Value(); });
      if (!replacement) {
        op->emitOpError("internal error: composite op has no decomposition");
        return signalPassFailure();
      }
      op->getResult(0).replaceAllUsesWith(replacement);
      op->erase();
    }
    // A reduction over one element per result (a scalar, or dims of size 1)
    // is its input in the result's shape: a view, not a kernel (the kernel
    // families need a dim to reduce). So is one with no result elements,
    // whose input has none either (the frontend refuses a reduction over
    // nothing with a result that has elements).
    SmallVector<Operation *> single;
    getOperation().walk([&](Operation *op) {
      if (!isa<SumOp, MeanOp, MaxOp, MinOp>(op))
        return;
      ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
      int64_t count = 1;  // elements per result (the verifier checked the axes)
      for (int64_t a : op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef())
        count *= in[a];
      if (count == 1 || shape::numElements(shapeOf(op->getResult(0))) == 0)
        single.push_back(op);
    });
    for (Operation *op : single) {
      OpBuilder b(op);
      TypedBuilder tb(b, op->getLoc());
      Value x = op->getOperand(0);
      Value r = shapeOf(x) == shapeOf(op->getResult(0)) ? x : tb.reshape(x, shapeOf(op->getResult(0)));
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
  }
};

} // namespace
} // namespace fusec
