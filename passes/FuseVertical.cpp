//===- FuseVertical.cpp - producer-consumer fusion driven by the cost model ===//
//
// Greedy, in program order: each compute op starts in its own group and tries
// to join the group of each of its producers (looking through views), largest
// byte saving first. A merge is taken when the union fits one kernel family,
// creates no cycle through another group, and the cost model predicts the
// merged kernel faster than the two apart. Every rejection is kept for
// `fusec explain`.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"
#include "passes/FusionOutlining.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstdio>

#define DEBUG_TYPE "fusec-fuse-vertical"

namespace fusec {
#define GEN_PASS_DEF_FUSECFUSEVERTICAL
#include "passes/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

std::string label(Operation *op) {
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    return loc.getName().str() + " (" + op->getName().stripDialect().str() + ")";
  return op->getName().stripDialect().str();
}

/// The compute op behind `v`, looking through views; null for inputs and generators.
Operation *producerOf(Value v) {
  Operation *def = viewSource(v).getDefiningOp();
  return def && !isGenerator(def) ? def : nullptr;
}

class Grouping {
public:
  Grouping(std::vector<Operation *> ops, const DeviceProfile &p) : ops(std::move(ops)), profile(p) {
    for (Operation *op : this->ops) {
      groupOf[op] = groups.size();
      groups.push_back({op});
    }
  }

  void run();
  std::vector<OpGroup> result() const;
  struct Rejection {
    std::string producer, consumer, reason;
  };
  std::vector<Rejection> rejections;

private:
  bool tryMerge(size_t producer, size_t consumer, Operation *at);
  bool createsCycle(const OpGroup &merged) const;
  double seconds(const OpGroup &g) const { return predictSeconds(groupCost(g), profile); }

  std::vector<Operation *> ops;
  const DeviceProfile &profile;
  llvm::DenseMap<Operation *, size_t> groupOf;
  std::vector<OpGroup> groups;  ///< emptied when merged away
};

bool Grouping::createsCycle(const OpGroup &merged) const {
  // Leave the group along any edge, then see whether a path comes back in.
  llvm::SmallPtrSet<Operation *, 32> members(merged.begin(), merged.end()), seen;
  std::vector<Operation *> work;
  auto pushUsers = [&](Operation *op) {
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers())
        work.push_back(u);
  };
  for (Operation *op : merged)
    pushUsers(op);
  while (!work.empty()) {
    Operation *u = work.back();
    work.pop_back();
    if (members.count(u)) {
      continue;
    }
    if (!seen.insert(u).second)
      continue;
    // Outside now: reaching a member from here closes a cycle, unless the path
    // so far is only views (those are cloned into the group).
    for (Value r : u->getResults())
      for (Operation *uu : r.getUsers()) {
        if (members.count(uu) && !isView(u))
          return true;
        work.push_back(uu);
      }
  }
  return false;
}

bool Grouping::tryMerge(size_t producer, size_t consumer, Operation *at) {
  OpGroup merged = groups[producer];
  merged.insert(merged.end(), groups[consumer].begin(), groups[consumer].end());
  std::sort(merged.begin(), merged.end(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  std::string producerName = label(groups[producer].back());
  auto reject = [&](std::string why) {
    rejections.push_back({producerName, label(at), std::move(why)});
    return false;
  };
  GroupSchedule schedule;
  std::string why;
  if (!classifyGroup(merged, schedule, why))
    return reject(why);
  if (createsCycle(merged))
    return reject("would create a cycle through another kernel");
  double apart = seconds(groups[producer]) + seconds(groups[consumer]);
  double together = seconds(merged);
  if (together >= apart) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "not faster: %.1f us fused vs %.1f us apart",
                  together * 1e6, apart * 1e6);
    return reject(buf);
  }
  for (Operation *op : groups[consumer])
    groupOf[op] = producer;
  groups[producer] = std::move(merged);
  groups[consumer].clear();
  return true;
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

std::vector<OpGroup> Grouping::result() const {
  std::vector<OpGroup> out;
  for (const OpGroup &g : groups)
    if (!g.empty())
      out.push_back(g);
  return out;
}

struct FuseVerticalPass : impl::FusecFuseVerticalBase<FuseVerticalPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    const DeviceProfile *profile = findDeviceProfile(device);
    if (!profile) {
      func.emitError("unknown device profile '") << device << "'";
      return signalPassFailure();
    }
    Grouping grouping(computeOps(func), *profile);
    grouping.run();
    Builder b(func.getContext());
    SmallVector<Attribute> rejected;
    for (const auto &r : grouping.rejections)
      rejected.push_back(b.getDictionaryAttr({
          b.getNamedAttr("producer", b.getStringAttr(r.producer)),
          b.getNamedAttr("consumer", b.getStringAttr(r.consumer)),
          b.getNamedAttr("reason", b.getStringAttr(r.reason)),
      }));
    func->setAttr("fusec.rejected", b.getArrayAttr(rejected));
    if (failed(outlineGroups(func, grouping.result(), *profile)))
      signalPassFailure();
  }
};

} // namespace
} // namespace fusec
