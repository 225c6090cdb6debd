//===- PickEarly.cpp - -fusec-pick-early ----------------------------------===//
//
// A pick sums one element of each row: sum over j of where(iota_j == t, T,
// 0), with t the same along j. At most one term is not zero, so the sum is
// that term, and an elementwise op between the element and values the same
// along j commutes with it:
//
//   sum(where(iota_j == t, f(a, r), 0), j)
//     = where(0 <= t < n, f(sum(where(iota_j == t, a, 0), j), r) + 0, 0)
//
// exactly, also where t is out of range (no term: 0), and in a zero's sign
// (+ 0: the sum, over +0 terms too, is never -0). The rewrite is made
// where r reads a reduction (a row statistic: log-softmax's max and log of
// the sum of exponentials), so that the pick reads the logits themselves
// and the statistics are applied to one value a row. That is what lets a
// cross-entropy written as a log-softmax then a pick stream over a
// product's logits (schedule/RowStatsForm.h): its summand then needs
// nothing known only at the end of the row.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/TypedBuilders.h"
#include "compiler/shape/ShapeRules.h"
#include "compiler/transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#define DEBUG_TYPE "fusec-pick-early"

namespace fusec {
#define GEN_PASS_DEF_FUSECPICKEARLY
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

/// `v`'s extent along dim `axis` of a shape of rank `rank` it broadcasts
/// to (1 where `v` has fewer dims).
int64_t alignedExtent(Value v, int64_t axis, int64_t rank) {
  ArrayRef<int64_t> s = shapeOf(v);
  int64_t d = axis - (rank - static_cast<int64_t>(s.size()));
  return d < 0 ? 1 : s[size_t(d)];
}

bool isZeroConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c && c.getValue().convertToDouble() == 0.0;
}

/// Whether `v` is computed (through at most `depth` ops) from a reduction;
/// `memo` keeps each op's answer (operands are shared).
bool readsReduction(Value v, llvm::DenseMap<Operation *, bool> &memo, int depth = 16) {
  Operation *d = v.getDefiningOp();
  if (!d || depth == 0)
    return false;
  if (isa<SumOp, MeanOp, MaxOp, MinOp>(d))
    return true;
  if (auto it = memo.find(d); it != memo.end())
    return it->second;
  bool found = llvm::any_of(d->getOperands(),
                            [&](Value o) { return readsReduction(o, memo, depth - 1); });
  return memo[d] = found;
}

/// The ops a pick moves through: one operand varies along the row, the
/// others are the same along it.
bool isMovable(Operation *op) { return isa<AddOp, SubOp, MulOp, DivOp, NegOp>(op); }

/// The operand of `op` that varies along `axis` (rank `rank`, extent `n`)
/// when every other operand is the same along it; -1 otherwise.
int varyingOperand(Operation *op, int64_t axis, int64_t rank, int64_t n) {
  int varying = -1;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    int64_t e = alignedExtent(op->getOperand(i), axis, rank);
    if (e == 1)
      continue;
    if (e != n || varying >= 0)
      return -1;
    varying = static_cast<int>(i);
  }
  // A divisor stays in the row: the pick of a -0 divisor is +0, and the
  // quotient's infinity would change sign (other ops change at most a
  // zero's sign, which the rewrite's + 0 restores).
  if (isa<DivOp>(op) && varying == 1)
    return -1;
  return varying;
}

/// Whether moving the pick through `v`'s op (and those below it) reaches a
/// row statistic: what the rewrite is for.
bool reachesStatistic(Value v, int64_t axis, int64_t rank, int64_t n,
                      llvm::DenseMap<Operation *, bool> &memo, int depth = 16) {
  Operation *op = v.getDefiningOp();
  if (!op || depth == 0 || !isMovable(op))
    return false;
  int varying = varyingOperand(op, axis, rank, n);
  if (varying < 0)
    return false;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (static_cast<int>(i) != varying && readsReduction(op->getOperand(i), memo))
      return true;
  return reachesStatistic(op->getOperand(varying), axis, rank, n, memo, depth - 1);
}

/// A pick's parts: sum(where(iota_axis == t, T, 0), axis).
struct Pick {
  SumOp sum;
  WhereOp where;
  Value index;  ///< t, integer, the same along the axis
  int64_t axis = 0, rank = 0, n = 0;
};

std::optional<Pick> matchPick(SumOp sum) {
  Pick p;
  p.sum = sum;
  ArrayRef<int64_t> axes = sum.getAxes();
  p.where = sum.getInput().getDefiningOp<WhereOp>();
  if (axes.size() != 1 || !p.where || !p.where->hasOneUse() || !isZeroConstant(p.where.getRhs()))
    return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(p.where.getResult());
  p.rank = static_cast<int64_t>(shape.size());
  p.axis = axes[0];
  p.n = shape[size_t(p.axis)];
  auto eq = p.where.getCondition().getDefiningOp<EqOp>();
  if (!eq || p.n < 2)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    Value i = eq->getOperand(side), t = eq->getOperand(1 - side);
    auto iota = i.getDefiningOp<IotaOp>();
    if (!iota || !isa<IntegerType>(cast<RankedTensorType>(i.getType()).getElementType()))
      continue;
    int64_t dim = iota.getDim() + (p.rank - static_cast<int64_t>(shapeOf(i).size()));
    if (dim == p.axis && alignedExtent(i, p.axis, p.rank) == p.n &&
        alignedExtent(t, p.axis, p.rank) == 1) {
      p.index = t;
      return p;
    }
  }
  return std::nullopt;
}

/// Rewrites `p` through its summand's op; returns the new pick's sum (to
/// move further), or null where the rewrite does not apply. A pick the pass
/// made (`inner`) feeds the op of the one it was moved from, which keeps
/// the row where t is a column and adds +0: its own f(pick(a), r) needs
/// neither (what it gives out of range, NaN or infinite, is dropped there;
/// a zero's sign the final + 0 restores).
SumOp pickEarly(Pick p, bool inner, llvm::DenseMap<Operation *, bool> &memo) {
  Value summand = p.where.getLhs();
  if (!reachesStatistic(summand, p.axis, p.rank, p.n, memo))
    return SumOp();
  Operation *op = summand.getDefiningOp();
  int varying = varyingOperand(op, p.axis, p.rank, p.n);
  Value zero = p.where.getRhs(), cond = p.where.getCondition(), a = op->getOperand(varying);
  auto shapeOfValue = [](Value v) { return shape::Shape(shapeOf(v).begin(), shapeOf(v).end()); };
  // The shapes first, so that nothing is built where one does not hold:
  // the new pick's, f's on it, and the old pick's (with its dim).
  shape::Shape pickedShape, innerShape, fShape, kept, resultShape;
  SmallVector<shape::Shape> fOperands;
  for (Value o : op->getOperands())
    fOperands.push_back(shapeOfValue(o));
  if (!shape::broadcast({shapeOfValue(cond), shapeOfValue(a), shapeOfValue(zero)}, pickedShape)
           .empty() ||
      !shape::reduce(pickedShape, {p.axis}, true, innerShape).empty())
    return SumOp();
  fOperands[size_t(varying)] = innerShape;
  if (!shape::broadcast(fOperands, fShape).empty() ||
      !shape::reduce(shapeOfValue(p.where.getResult()), {p.axis}, true, kept).empty() ||
      !shape::broadcast({shapeOfValue(p.index), fShape}, resultShape).empty() ||
      !shape::broadcastTo(resultShape, kept).empty())
    return SumOp();
  OpBuilder b(p.sum);
  TypedBuilder tb(b, p.sum.getLoc());
  Value picked = tb.reduce<SumOp>(tb.where(cond, a, zero), {p.axis}, /*keepdims=*/true);
  // f(picked, r): the op again, its varying operand now one value a row.
  SmallVector<Value> operands(op->getOperands());
  operands[size_t(varying)] = picked;
  Type elt = cast<RankedTensorType>(summand.getType()).getElementType();
  Operation *f = b.create(op->getLoc(), op->getName().getIdentifier(), operands,
                          {RankedTensorType::get(fShape, elt)}, op->getAttrs());
  Value result = f->getResult(0);
  if (!inner) {
    // 0 <= t < n: whether the row has the term.
    Type it = cast<RankedTensorType>(p.index.getType()).getElementType();
    // (One op a statement: the order of a call's arguments is the
    // compiler's, and the IR's order would be too.)
    Value fromFirst = tb.compare<GeOp>(p.index, tb.constant(0, it));
    Value beforeEnd = tb.compare<LtOp>(p.index, tb.constant(double(p.n), it));
    Value inRange = tb.where(fromFirst, beforeEnd, tb.constant(0, b.getI1Type()));
    // + 0: the sum of the terms (one of them, the rest +0) is never -0,
    // while f(pick(a), r) may be; adding +0 changes nothing else. Out of
    // range, +0 (the sum of the +0 terms, whatever the where's zero was).
    Value plusZero = tb.constant(0.0, elt);
    result = tb.where(inRange, tb.binary<AddOp>(result, plusZero), plusZero);
  }
  if (shapeOf(result) != ArrayRef<int64_t>(kept))
    result = tb.broadcastTo(result, kept);
  if (!p.sum.getKeepdims())
    result = tb.reshape(result, shapeOf(p.sum.getResult()));
  p.sum.getResult().replaceAllUsesWith(result);
  p.sum->erase();
  return cast<SumOp>(picked.getDefiningOp());
}

struct PickEarlyPass : impl::FusecPickEarlyBase<PickEarlyPass> {
  void runOnOperation() override {
    SmallVector<SumOp> work;
    llvm::DenseMap<Operation *, bool> memo;
    llvm::SmallPtrSet<Operation *, 8> made;  // the picks the pass made
    getOperation().walk([&](SumOp s) { work.push_back(s); });
    while (!work.empty()) {
      SumOp s = work.pop_back_val();
      std::optional<Pick> p = matchPick(s);
      if (!p)
        continue;
      WhereOp where = p->where;
      const bool inner = made.erase(s);
      if (SumOp next = pickEarly(*p, inner, memo)) {
        // (An erased op's address may be taken by a new one: forgotten.)
        memo.erase(where);
        made.insert(next);
        if (where->use_empty())
          where->erase();
        work.push_back(next);
      }
    }
  }
};

} // namespace
} // namespace fusec
