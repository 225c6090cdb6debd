//===- FuseVertical.cpp - producer-consumer fusion driven by the cost model ===//
//
// Greedy, in program order: each compute op starts in its own group and tries
// to join the group of each of its producers (looking through views), largest
// byte saving first. A merge is taken when the union fits one kernel family,
// creates no cycle through another group, and the cost model predicts the
// merged kernel faster than the two apart. Every rejection is kept for
// `fusec explain`.
//
// Then recomputation: an elementwise op whose result another group reads
// from HBM (a multi-consumer intermediate) is cloned into that group when the
// cost model predicts the two groups faster that way: the consumer reads the
// op's inputs instead of its result, and the producer group may no longer
// need to write it at all. Cheap ops on inputs the consumer already reads
// pay; ops that widen what the consumer must read do not. Both outcomes are
// recorded (fusec.recomputed, fusec.rejected).
//
// Last, each matmul group picks how it runs (MatmulPaths.cpp): fusec's own GEMM with the
// epilogue in registers (one kernel; with a prologue, elementwise ops that
// compute an operand as the kernel loads it, unless the prologue runs
// faster as a kernel of its own); cuBLASLt applying the epilogue itself
// where the group is exactly what its epilogues express (a scale, a residual
// as C, a bias, gelu(tanh); one call); or cuBLASLt for the product and, when
// there is an epilogue, a pointwise kernel for it (the group is split). The
// cost model predicts each with its own rate; the choice and the times go on
// the matmul op (fusec.gemm, fusec.gemm_alternatives) for
// outlining, code generation and `fusec explain`. Sibling matmuls of one A
// then share kernels (FuseSiblings.cpp); the grouping state is Grouping.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/FusionOutlining.h"
#include "compiler/transforms/Grouping.h"
#include "compiler/transforms/PassProfile.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#define DEBUG_TYPE "fusec-fuse-vertical"

namespace fusec {
#define GEN_PASS_DEF_FUSECFUSEVERTICAL
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec::detail {

bool Grouping::createsCycle(const OpGroup &merged) const {
  // Leave the group along any edge, then see whether a path comes back in.
  // A path of views alone does not close a cycle (they are cloned into the
  // group); one that has passed any other op does, whatever its last op is.
  // An op after the group's last member (program order: uses follow their
  // definitions) cannot lead back into it, so the walk stops there rather
  // than cross the rest of the graph at every merge tried (deep stacks would
  // plan in quadratic time).
  llvm::SmallPtrSet<Operation *, 32> members(merged.begin(), merged.end());
  llvm::SmallPtrSet<Operation *, 32> seen[2];  // by whether a non-view was passed
  Operation *last = merged.front();
  for (Operation *op : merged)
    if (op->getBlock() == last->getBlock() && last->isBeforeInBlock(op))
      last = op;
  std::vector<std::pair<Operation *, bool>> work;
  for (Operation *op : merged)
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers())
        work.push_back({u, false});
  while (!work.empty()) {
    auto [u, passed] = work.back();
    work.pop_back();
    if (members.count(u))
      continue;
    if (u->getBlock() == last->getBlock() && last->isBeforeInBlock(u))
      continue;
    passed = passed || !isView(u);
    if (!seen[passed].insert(u).second)
      continue;
    for (Value r : u->getResults())
      for (Operation *uu : r.getUsers()) {
        if (members.count(uu) && passed)
          return true;
        work.push_back({uu, passed});
      }
  }
  return false;
}

bool Grouping::tryMerge(size_t producer, size_t consumer, Operation *at) {
  OpGroup merged = united(groups[producer], groups[consumer]);
  if (matmulsClosed)
    for (size_t g : {producer, consumer})
      if (llvm::any_of(groups[g], [](Operation *op) { return isa<MatmulOp>(op); }))
        return false;
  std::string producerName = nodeLabel(groups[producer].back());
  auto reject = [&](DecisionReason code, std::string why, double fused = -1, double apart = -1) {
    rejections.push_back({producerName, nodeLabel(at), std::move(why), code, fused, apart});
    return false;
  };
  GroupSchedule schedule;
  std::string why;
  if (!classifyGroup(merged, schedule, why))
    return reject(DecisionReason::NoKernelFamily, why);
  if (createsCycle(merged))
    return reject(DecisionReason::Cycle, "would create a cycle through another kernel");
  SmallVector<Operation *> mms;
  for (Operation *op : merged)
    if (isa<MatmulOp>(op))
      mms.push_back(op);
  if (gemmChoice == "cublaslt" && mms.size() > 1)
    return reject(DecisionReason::SiblingsNeedFusecGemm,
                  "sibling matmuls share a kernel only on fusec's kernels (--gemm cublaslt)");
  double apart = seconds(groups[producer]) + seconds(groups[consumer]);
  double together = seconds(merged);
  // Sibling matmuls of 9-64 rows run on the tensor-core dot-product kernel
  // or, on sm_90a, side by side on its Hopper form (classifySiblings,
  // siblingGemvPath); apart, each is priced at cuBLASLt's rate, as every
  // matmul group is before the GEMM choice (seconds()).
  if (mms.size() > 1 && tensorCoreGemvApplies(mms.front()))
    together = predictSeconds(groupCost(merged), profile,
                              siblingGemvPath(merged, arch, profile.smCount));
  if (isDual(merged)) {
    if (!dualWgmmaApplies(mms[0], mms[1], arch) || profile.wgmmaFlopsPerSec <= 0)
      return reject(DecisionReason::NeedsHopper,
                    "two sibling products share a kernel only on Hopper's wgmma GEMM (target " +
                    arch + ")");
    // Apart, a product alone runs on cuBLASLt and a product with an
    // epilogue (which may read the other's result) on fusec's kernel, as
    // chooseMatmulPaths would pick; together, both products in one kernel.
    auto priced = [&](const OpGroup &g) {
      bool alone = llvm::all_of(g, [](Operation *op) { return isa<MatmulOp>(op) || isView(op); });
      return alone ? seconds(g) : predictSeconds(groupCost(g), profile, GemmPath::FusecWgmma);
    };
    apart = priced(groups[producer]) + priced(groups[consumer]);
    together = predictSeconds(groupCost(merged), profile, GemmPath::FusecWgmma);
  }
  if (together >= apart) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "not faster: %.1f us fused vs %.1f us apart",
                  together * 1e6, apart * 1e6);
    return reject(DecisionReason::NotFaster, buf, together * 1e6, apart * 1e6);
  }
  for (Operation *op : groups[consumer])
    groupOf[op] = producer;
  groups[producer] = std::move(merged);
  groups[consumer].clear();
  return true;
}

double Grouping::splitEpilogueSeconds(const OpGroup &epilogue, bool &joins) const {
  joins = false;
  std::optional<size_t> consumer;
  for (Operation *op : epilogue)
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers()) {
        while (isView(user) && user->getResult(0).hasOneUse())
          user = *user->getResult(0).getUsers().begin();
        if (llvm::is_contained(epilogue, user))
          continue;
        auto it = groupOf.find(user);
        if (it == groupOf.end() || (consumer && *consumer != it->second))
          return seconds(epilogue);  // a graph output, a view, or several readers
        consumer = it->second;
      }
  if (!consumer ||
      llvm::any_of(groups[*consumer], [](Operation *op) { return isa<MatmulOp>(op); }))
    return seconds(epilogue);
  OpGroup merged = united(epilogue, groups[*consumer]);
  GroupSchedule schedule;
  std::string why;
  if (!classifyGroup(merged, schedule, why) || createsCycle(merged))
    return seconds(epilogue);
  double added = seconds(merged) - seconds(groups[*consumer]);
  if (added >= seconds(epilogue))
    return seconds(epilogue);
  joins = true;
  return std::max(0.0, added);
}

void Grouping::run() {
  for (Operation *op : ops) {
    // Producer groups, the one saving the most bytes (largest operand) first.
    std::vector<std::pair<int64_t, size_t>> candidates;
    for (Value v : op->getOperands())
      if (Operation *p = producerOf(v))
        if (groupOf.count(p))
          candidates.push_back({tensorBytes(viewSource(v)), groupOf[p]});
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](auto &a, auto &b) { return a.first > b.first; });
    for (auto [bytes, g] : candidates) {
      size_t mine = groupOf[op];
      if (g == mine || groups[g].empty())
        continue;
      tryMerge(g, mine, op);
    }
  }
}

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
    // The second run() walks `ops`: an erased original must not be in it
    // (its memory is freed here and may be reused by the time run() reads it).
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

std::vector<OpGroup> Grouping::result() const {
  std::vector<OpGroup> out;
  for (const OpGroup &g : groups)
    if (!g.empty())
      out.push_back(g);
  return out;
}

} // namespace fusec::detail

namespace fusec {
namespace {
using detail::Grouping;

struct FuseVerticalPass : impl::FusecFuseVerticalBase<FuseVerticalPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<DeviceProfile> profile =
        passProfile(func, device, copyBytesPerSec, smCount);
    if (!profile)
      return signalPassFailure();
    Grouping grouping(computeOps(func), *profile, gemm, arch.empty() ? profile->arch : arch);
    grouping.run();
    grouping.recompute();
    grouping.chooseMatmulPaths();
    grouping.run();  // split-off epilogues may now join their consumers
    grouping.mergeSiblings();
    Builder b(func.getContext());
    auto decisions = [&](const std::vector<Grouping::Decision> &list) {
      SmallVector<Attribute> attrs;
      for (const auto &r : list) {
        // The two ways' predictions where the cost model decided.
        FloatAttr fused = r.fusedUs >= 0 ? b.getF64FloatAttr(r.fusedUs) : FloatAttr();
        FloatAttr apart = r.fusedUs >= 0 ? b.getF64FloatAttr(r.apartUs) : FloatAttr();
        attrs.push_back(DecisionAttr::get(b.getContext(), r.producer, r.consumer, r.code,
                                          r.reason, fused, apart));
      }
      return b.getArrayAttr(attrs);
    };
    func->setAttr("fusec.rejected", decisions(grouping.rejections));
    if (!grouping.recomputations.empty())
      func->setAttr("fusec.recomputed", decisions(grouping.recomputations));
    if (failed(outlineGroups(func, grouping.result(), *profile)))
      signalPassFailure();
  }
};

} // namespace
} // namespace fusec
