//===- RecomputeProducers.cpp - cheap producers copied into their readers -===//
//
// An elementwise op whose result another group reads from HBM (a
// multi-consumer intermediate) is cloned into that group when the cost model
// predicts the two groups faster that way: the consumer reads the op's
// inputs instead of its result, and the producer group may no longer need
// to write it at all. Cheap ops on inputs the consumer already reads pay;
// ops that widen what the consumer must read do not. Both outcomes are
// recorded (fusec.recomputed, fusec.rejected).
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/transforms/Grouping.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstdio>

namespace fusec {
#define GEN_PASS_DEF_FUSECRECOMPUTEPRODUCERS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec::detail {

/// `p` and the elementwise ops of its group that it depends on: what a
/// consumer must recompute to read the group's inputs instead.
static OpGroup elementwiseChain(Operation *p, const OpGroup &group) {
  llvm::SmallPtrSet<Operation *, 8> in{p};
  std::vector<Operation *> work{p};
  while (!work.empty()) {
    Operation *op = work.back();
    work.pop_back();
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp())
        if (d->hasTrait<fusec::OpTrait::ElementwiseMap>() && d->getNumResults() == 1 &&
            llvm::is_contained(group, d) && in.insert(d).second)
          work.push_back(d);
  }
  OpGroup chain(in.begin(), in.end());
  std::sort(chain.begin(), chain.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return chain;
}

bool Grouping::tryRecompute(Operation *p, OpOperand &use, size_t gc) {
  size_t gp = groupOf[p];
  Operation *consumer = use.getOwner();
  double before = seconds(groups[gp]) + seconds(groups[gc]);
  // Two candidates: the op alone, and with the chain behind it in its group
  // (gelu(x + b): cloning gelu alone still needs x + b written).
  OpGroup chain = elementwiseChain(p, groups[gp]);
  std::vector<OpGroup> candidates{{p}};
  if (chain.size() > 1)
    candidates.push_back(chain);
  struct Trial {
    double after = 0;
    std::vector<Operation *> clones;
  };
  auto attempt = [&](const OpGroup &copied, bool keep, double &after) {
    // Clone next to the consumer (operands dominate it there); the consumer
    // reads the clone of `p`.
    OpBuilder b(consumer);
    IRMapping map;
    std::vector<Operation *> clones;
    for (Operation *op : copied)
      clones.push_back(b.clone(*op, map));
    use.set(map.lookup(p->getResult(0)));
    OpGroup withClones = groups[gc];
    withClones.insert(withClones.end(), clones.begin(), clones.end());
    std::sort(withClones.begin(), withClones.end(),
              [](Operation *a, Operation *c) { return a->isBeforeInBlock(c); });
    OpGroup producerGroup = groups[gp];
    // Originals nobody reads any more leave the producer group (reverse
    // order: a dead op may be the last user of another).
    std::vector<Operation *> dead;
    for (auto it = copied.rbegin(); it != copied.rend(); ++it)
      if ((*it)->use_empty() ||
          llvm::all_of((*it)->getUsers(), [&](Operation *u) { return llvm::is_contained(dead, u); }))
        dead.push_back(*it);
    for (Operation *d : dead)
      llvm::erase(producerGroup, d);
    GroupSchedule schedule;
    std::string why;
    bool legal = classifyGroup(withClones, schedule, why) && !createsCycle(withClones);
    // A clone that computes a matmul operand would be a prologue: priced
    // here at the library's rate, where it costs nothing, and possibly split
    // off again by chooseMatmulPaths (computed twice, one kernel more). Only
    // merges make prologues.
    for (Operation *op : withClones)
      if (legal && isa<MatmulOp>(op))
        for (Operation *pro : matmulPrologue(op, withClones))
          legal = legal && !llvm::is_contained(clones, pro);
    after = legal ? seconds(withClones) + seconds(producerGroup) : 0;
    if (!keep || !legal) {
      use.set(p->getResult(0));
      for (auto it = clones.rbegin(); it != clones.rend(); ++it)
        (*it)->erase();
      return legal;
    }
    for (Operation *c : clones) {
      groupOf[c] = gc;
      // The unfused baseline counts each graph op once (see annotate).
      c->setAttr("fusec.recomputed", UnitAttr::get(c->getContext()));
    }
    groups[gc] = std::move(withClones);
    groups[gp] = std::move(producerGroup);
    // An erased original leaves `ops` (record() reads it; its memory is
    // freed here and may be reused).
    for (Operation *d : dead) {
      // Its copy now stands for it in the unfused baseline (annotate) unless
      // it was itself a copy of an op counted elsewhere.
      if (!d->hasAttr("fusec.recomputed"))
        if (Operation *c = map.lookupOrNull(d->getResult(0)).getDefiningOp())
          c->removeAttr("fusec.recomputed");
      groupOf.erase(d);
      llvm::erase(ops, d);
      d->erase();
    }
    return true;
  };
  int best = -1;
  double bestAfter = before, seen = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double after = 0;
    if (!attempt(candidates[i], false, after))
      continue;
    seen = seen == 0 ? after : std::min(seen, after);
    if (after < bestAfter)
      bestAfter = after, best = static_cast<int>(i);
  }
  char buf[160];
  if (best < 0) {
    if (seen > 0) {
      std::snprintf(buf, sizeof buf,
                    "not recomputed: %.1f us with a copy vs %.1f us reading it from memory",
                    seen * 1e6, before * 1e6);
      // The fixed-point loop may ask again: say it once.
      Decision d{nodeLabel(p), nodeLabel(consumer), buf, DecisionReason::NotRecomputed,
                 seen * 1e6, before * 1e6};
      if (llvm::none_of(rejections, [&](const Decision &r) {
            return r.producer == d.producer && r.consumer == d.consumer && r.reason == d.reason;
          }))
        rejections.push_back(std::move(d));
    }
    return false;
  }
  std::string names;
  for (Operation *op : candidates[best])
    names += (names.empty() ? "" : ", ") + nodeLabel(op);
  std::snprintf(buf, sizeof buf, "%.1f us recomputing vs %.1f us reading it from memory",
                bestAfter * 1e6, before * 1e6);
  recomputations.push_back(
      {names, nodeLabel(consumer), buf, DecisionReason::Recomputed, bestAfter * 1e6, before * 1e6});
  double after = 0;
  attempt(candidates[best], true, after);
  return true;
}

void Grouping::recompute() {
  // Each clone can expose its own operands' producers: a chain is pulled in
  // one op at a time, each step justified by the cost model. A success
  // changes the consumer's group (re-read at once: its clones' operands are
  // new candidates) and the producer's (it loses originals nobody reads, so
  // another consumer's price of it moves): passes over every group repeat
  // until one changes nothing. Restarting from the first group after every
  // success instead would retry every earlier failure each time (about 30
  // times the tries of these passes on a 64-layer decode stack).
  // One recomputation into group gc, or none.
  auto recomputeInto = [&](size_t gc) {
    for (Operation *c : OpGroup(groups[gc]))
      for (OpOperand &use : c->getOpOperands()) {
        Operation *p = use.get().getDefiningOp();
        if (!p || !groupOf.count(p) || groupOf[p] == gc || p->getNumResults() != 1 ||
            !p->hasTrait<fusec::OpTrait::ElementwiseMap>())
          continue;
        if (tryRecompute(p, use, gc))
          return true;
      }
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t gc = 0; gc < groups.size(); ++gc)
      while (recomputeInto(gc))
        changed = true;
  }
}

} // namespace fusec::detail

namespace fusec {
namespace {
struct RecomputeProducersPass
    : detail::GroupingPass<RecomputeProducersPass, impl::FusecRecomputeProducersBase> {
  using GroupingPass::GroupingPass;
  void stage(detail::Grouping &g) { g.recompute(); }
};
} // namespace
} // namespace fusec
