//===- RowStatsForm.cpp - a product's row max and sum of exponentials -----===//
#include "compiler/schedule/RowStatsForm.h"

#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/GemmForms.h"
#include "compiler/schedule/StridedView.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

using namespace mlir;

namespace fusec {
namespace {

bool before(Operation *a, Operation *b) { return a->isBeforeInBlock(b); }

/// Whether `v` is computed from the graph's inputs and constants alone, not
/// from the product (values computed before it cannot be; a constant or a
/// label's cast written after it are not either).
bool independentOf(Value v, Operation *product, llvm::DenseMap<Operation *, bool> &memo,
                   int depth = 0) {
  Operation *d = v.getDefiningOp();
  if (!d || d->isBeforeInBlock(product))
    return true;
  if (d == product || depth > 32)
    return false;
  if (auto it = memo.find(d); it != memo.end())
    return it->second;
  bool ok = true;
  for (Value o : d->getOperands())
    if (!(ok = independentOf(o, product, memo, depth + 1)))
      break;
  return memo[d] = ok;
}

/// The ops of the rows' shape that compute on m and l (and on values that do
/// not depend on the product: inputs, constants): log(l) + m and what
/// follows it.
std::vector<Operation *> tailOf(const RowStatsMatch &m, ArrayRef<int64_t> rowShape) {
  // (Op handles are copied: their accessors are not const.)
  MaxOp max = m.max;
  SumOp sum = m.sum;
  SubOp sub = m.sub;
  MatmulOp product = m.product;
  llvm::SmallPtrSet<Operation *, 8> accepted{max, sum};
  std::vector<Operation *> candidates, work{max, sum}, tail;
  for (SumOp pick : m.picks) {
    accepted.insert(pick);
    work.push_back(pick);
  }
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *op = work.back();
    work.pop_back();
    for (Operation *u : op->getUsers())
      if (u != sub.getOperation() && isElementwise(u) && u->getNumResults() == 1 &&
          shapeOf(u->getResult(0)) == rowShape && seen.insert(u).second) {
        candidates.push_back(u);
        work.push_back(u);
      }
  }
  std::sort(candidates.begin(), candidates.end(), before);
  llvm::DenseMap<Operation *, bool> memo;
  for (Operation *c : candidates) {
    bool ok = true;
    for (Value o : c->getOperands()) {
      Operation *d = o.getDefiningOp();
      if (!d || accepted.count(d) || independentOf(o, product, memo))
        continue;
      ok = false;
    }
    if (ok) {
      accepted.insert(c);
      tail.push_back(c);
    }
  }
  return tail;
}

/// The picks of logits `x` (RowStatsMatch::picks): each sum over the last
/// axis of a chain of elementwise ops of x's shape from x, their other
/// operands not reading x, and the chain's ops (`chain`). Empty where a
/// reader of x (other than `max` and `sub`) is anything else.
std::optional<std::vector<SumOp>> picksOf(Value x, MaxOp max, SubOp sub,
                                          std::vector<Operation *> &chain) {
  std::vector<SumOp> picks;
  ArrayRef<int64_t> shape = shapeOf(x);
  std::vector<Value> work{x};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value v = work.back();
    work.pop_back();
    for (Operation *u : v.getUsers()) {
      if (u == max.getOperation() || u == sub.getOperation() || !seen.insert(u).second)
        continue;
      if (auto s = dyn_cast<SumOp>(u); s && reducesLastAxis(s)) {
        if (!isFloat(dtypeOf(s.getResult())))
          return std::nullopt;  // summed in fp32 by the epilogue: exact for floats only
        picks.push_back(s);
        continue;
      }
      if (!isElementwise(u) || u->getNumResults() != 1 || shapeOf(u->getResult(0)) != shape)
        return std::nullopt;
      chain.push_back(u);
      work.push_back(u->getResult(0));
    }
  }
  return picks;
}

} // namespace

std::optional<RowStatsMatch> matchRowStats(Operation *op, std::string &why) {
  why.clear();
  RowStatsMatch m;
  m.sum = dyn_cast<SumOp>(op);
  if (!m.sum || !reducesLastAxis(m.sum))
    return std::nullopt;
  m.exp = m.sum.getInput().getDefiningOp<ExpOp>();
  m.sub = m.exp ? m.exp.getInput().getDefiningOp<SubOp>() : SubOp();
  m.max = m.sub ? m.sub.getRhs().getDefiningOp<MaxOp>() : MaxOp();
  if (!m.max || m.max.getInput() != m.sub.getLhs() || !reducesLastAxis(m.max))
    return std::nullopt;
  m.logits = m.sub.getLhs();
  ArrayRef<int64_t> sShape = shapeOf(m.logits);
  if (sShape.size() < 2 || shapeOf(m.sub.getResult()) != sShape)
    return std::nullopt;
  std::optional<ScoresChain> chain = scoresChain(m.logits);
  if (!chain)
    return std::nullopt;
  m.product = chain->scores;
  std::vector<Operation *> group{m.product, m.max, m.sub, m.exp, m.sum};
  group.insert(group.end(), chain->onScores.begin(), chain->onScores.end());
  addSideOps(group, chain->onScores);
  // Sums of functions of x alone (and of indices and per-row values) over
  // the same columns ride along; each sum's operand chain is the group's.
  std::vector<Operation *> pickChain;
  std::optional<std::vector<SumOp>> picks = picksOf(m.logits, m.max, m.sub, pickChain);
  if (!picks)
    return std::nullopt;
  m.picks = *picks;
  group.insert(group.end(), pickChain.begin(), pickChain.end());
  for (SumOp p : m.picks)
    group.push_back(p);
  addSideOps(group, pickChain);
  // The product, the logits and the exponentials stay inside: that is the
  // point. m, l and the picks may be read outside.
  auto isPick = [&](Operation *g) {
    return llvm::any_of(m.picks, [&](SumOp p) { return p.getOperation() == g; });
  };
  auto keptInside = [&](Operation *g) {
    return g != m.max.getOperation() && g != m.sum.getOperation() && !isPick(g);
  };
  for (Operation *g : group)
    if (keptInside(g))
      for (Operation *u : g->getUsers())
        if (!llvm::is_contained(group, u))
          return std::nullopt;
  // A pick's other operands (and so the side ops computing them) do not
  // depend on the product: the epilogue has each element's logit and
  // nothing of the rows' statistics, which are not known until the end.
  llvm::DenseMap<Operation *, bool> memo;
  for (Operation *c : pickChain)
    for (Value o : c->getOperands())
      if (o != m.logits && !llvm::is_contained(pickChain, o.getDefiningOp()) &&
          !independentOf(o, m.product, memo))
        return std::nullopt;
  m.tail = tailOf(m, shapeOf(m.sum.getResult()));
  group.insert(group.end(), m.tail.begin(), m.tail.end());
  // What only the tail reads of those values (a label's range check) is
  // computed with it.
  addSideOps(group, m.tail);
  std::sort(group.begin(), group.end(), before);
  m.ops = std::move(group);
  m.rows = sShape.end()[-2];
  m.cols = sShape.back();
  for (int64_t b : matmulBatchShape(m.product))
    m.batch *= b;

  auto decline = [&](std::string reason) -> std::optional<RowStatsMatch> {
    why = "the streamed row statistics " + reason;
    return std::nullopt;
  };
  DType dt = dtypeOf(m.product.getLhs());
  if ((dt != DType::BF16 && dt != DType::F16) || dtypeOf(m.product.getRhs()) != dt)
    return decline("take a product of bf16 or f16 operands of one dtype");
  if (m.batch > 65535)
    return decline("take at most 65535 matrices in the batch");
  return m;
}

KernelFamily rowStatsPath(const RowStatsMatch &m, const std::string &arch) {
  MatmulOp product = m.product;
  return wgmmaApplies(product, arch) ? KernelFamily::FusecWgmma : KernelFamily::Fusec;
}

std::optional<RowStatsMatch> rowStatsAmong(ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    std::string why;
    std::optional<RowStatsMatch> m = isa<SumOp>(op) ? matchRowStats(op, why) : std::nullopt;
    if (m && llvm::all_of(m->ops, [&](Operation *o) { return llvm::is_contained(ops, o); }))
      return m;
  }
  return std::nullopt;
}

std::optional<RowStatsMatch> rowStatsGroup(ArrayRef<Operation *> ops) {
  std::optional<RowStatsMatch> m = rowStatsAmong(ops);
  if (m && m->ops.size() == ops.size())
    return m;
  return std::nullopt;
}

std::optional<RowStatsMatch> rowStatsOf(FusionOp fusion, std::string *why) {
  std::string declined;
  for (Operation &op : fusion.getBodyBlock())
    if (isa<SumOp>(op))
      if (std::optional<RowStatsMatch> m = matchRowStats(&op, declined))
        return m;
  if (why)
    *why = declined;
  return std::nullopt;
}

} // namespace fusec
