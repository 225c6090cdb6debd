//===- AttentionOperands.cpp - K and V read through a repeat or in pieces --===//
//
// Grouped-query attention repeats each K/V head for R query heads
// (reshape -> broadcast_to -> reshape). No strided view reads the repeat
// (the repeated dim sits inside the merged head dim), so without this rule
// it is copied R times before the kernel. The attention kernel instead
// reads batch entry b's keys from the source's entry b / R. A decode step's
// cache with its new rows appended (a concat along the keys that only the
// repeat reads) is read piece by piece, the joined cache never written.
//
//===----------------------------------------------------------------------===//
#include "compiler/schedule/AttentionForm.h"

#include "compiler/cost/CostModel.h"

using namespace mlir;

namespace fusec {
namespace {

/// Whether `t` swaps the last two dims and keeps the others.
bool swapsLastTwo(TransposeOp t) {
  ArrayRef<int64_t> perm = t.getPerm();
  size_t n = perm.size();
  for (size_t i = 0; i + 2 < n; ++i)
    if (perm[i] != (int64_t)i)
      return false;
  return n >= 2 && perm[n - 2] == (int64_t)n - 1 && perm[n - 1] == (int64_t)n - 2;
}

} // namespace

std::optional<HeadRepeat> headRepeat(Value v) {
  HeadRepeat r;
  if (auto t = v.getDefiningOp<TransposeOp>()) {
    if (!swapsLastTwo(t))
      return std::nullopt;
    v = t->getOperand(0);
    r.transposed = true;
  }
  auto merged = v.getDefiningOp<ReshapeOp>();
  auto bc = merged ? merged->getOperand(0).getDefiningOp<BroadcastToOp>() : BroadcastToOp();
  if (!bc)
    return std::nullopt;
  ArrayRef<int64_t> out = shapeOf(merged.getResult()), wide = shapeOf(bc.getResult()),
                    src = shapeOf(bc->getOperand(0));
  size_t n = out.size();
  if (n < 3 || wide.size() != n + 1 || src.size() != n + 1)
    return std::nullopt;
  // wide = [.., G, R, rows, cols], out = [.., G*R, rows, cols], src has R = 1.
  for (size_t i = 0; i + 3 < n; ++i)
    if (wide[i] != out[i] || src[i] != wide[i])
      return std::nullopt;
  int64_t g = wide[n - 3], rep = wide[n - 2];
  if (out[n - 3] != g * rep || src[n - 3] != g || src[n - 2] != 1 || rep < 2)
    return std::nullopt;
  for (size_t i = n - 1; i <= n; ++i)
    if (wide[i] != out[i - 1] || src[i] != wide[i])
      return std::nullopt;
  r.source = bc->getOperand(0);
  r.groups = g;
  r.repeats = rep;
  return r;
}

std::optional<AttentionOperand> attentionOperand(Value v, const std::vector<int64_t> &batch,
                                                 bool keys, bool pieces) {
  // [.., H, S, D] as the product reads it (K transposed back).
  Value u = v;
  if (keys) {
    auto t = v.getDefiningOp<TransposeOp>();
    if (!t || !swapsLastTwo(t))
      return std::nullopt;
    u = t->getOperand(0);
  }
  std::optional<HeadRepeat> rep = headRepeat(u);
  if (rep && rep->transposed)
    return std::nullopt;
  ArrayRef<int64_t> hs = shapeOf(u);
  size_t n = hs.size();
  if (n < 3 || n - 2 != batch.size() || !std::equal(batch.begin(), batch.end(), hs.begin()))
    return std::nullopt;
  AttentionOperand op;
  std::vector<int64_t> entries = batch;  // the source's batch dims
  Value src = u;                         // [.., G, S, D], or [.., G, 1, S, D] under a repeat
  if (rep) {
    op.repeat = rep->repeats;
    entries.back() = rep->groups;
    src = rep->source;
  }
  const int64_t D = hs.back(), S = hs[n - 2];
  // A join along the keys whose result only this operand reads.
  ConcatOp cat;
  if (pieces) {
    Value c = src;
    if (auto r = c.getDefiningOp<ReshapeOp>(); r && rep)
      c = r->getOperand(0);
    cat = c.getDefiningOp<ConcatOp>();
    // Every value from the operand down to the join: a view read once.
    bool alone = true;
    for (Value w = v; alone && cat && w != cat.getResult();) {
      Operation *d = w.getDefiningOp();
      alone = w.hasOneUse() && d && isView(d) && d->getNumOperands() > 0;
      if (alone)
        w = d->getOperand(0);
    }
    if (cat && (!alone || !cat->hasOneUse() ||
                cat.getAxis() != static_cast<int64_t>(shapeOf(cat.getResult()).size()) - 2))
      cat = ConcatOp();
  }
  if (!cat && op.repeat == 1)
    return std::nullopt;  // one strided view, or a copy, reads it
  // Each piece as rows of keys over the source's entries, the head dim
  // contiguous and 16-byte aligned.
  auto add = [&](Value piece, int64_t len) {
    std::optional<StridedView> view = stridedView(piece);
    std::vector<int64_t> shape = entries;
    shape.push_back(len);
    shape.push_back(D);
    if (view)
      view = reshapeView(*view, shape);
    if (!view)
      return false;
    std::optional<MatrixLayoutView> l =
        layoutOfView(*view, entries, 'r', dtypeBytes(dtypeOf(piece)));
    if (!l || !l->rowMajor || !alignedFor16ByteCopies(*l))
      return false;
    op.pieces.push_back({piece, *l, len});
    return true;
  };
  if (cat) {
    op.concat = cat;
    for (Value piece : cat.getInputs())
      if (!add(piece, shapeOf(piece).end()[-2]))
        return std::nullopt;
  } else if (!add(src, S)) {
    return std::nullopt;
  }
  return op;
}

} // namespace fusec
