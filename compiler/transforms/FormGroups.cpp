//===- FormGroups.cpp - producer-consumer merges driven by the cost model -===//
//
// Greedy, in program order: each compute op tries to join the group of each
// of its producers (looking through views), largest byte saving first. A
// merge is taken when the union fits one kernel family, creates no cycle
// through another group, and the cost model predicts the merged kernel
// faster than the two apart. Every rejection is kept for `fusec explain`.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/schedule/StridedView.h"
#include "compiler/transforms/Grouping.h"
#include "compiler/transforms/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace fusec {
#define GEN_PASS_DEF_FUSECFORMGROUPS
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
  if (matmulsClosed)
    for (size_t g : {producer, consumer})
      if (llvm::any_of(groups[g], [](Operation *op) { return isa<MatmulOp>(op); }))
        return false;
  std::string producerName = nodeLabel(groups[producer].back());
  auto reject = [&](DecisionReason code, std::string why, double fused = -1, double apart = -1) {
    rejections.push_back({producerName, nodeLabel(at), std::move(why), code, fused, apart});
    return false;
  };
  // Checked before anything walks the merged group, so that a long chain
  // plans in time linear in its length.
  if (std::string why = tooManyKernelOps(
          static_cast<int64_t>(groups[producer].size() + groups[consumer].size()));
      !why.empty())
    return reject(DecisionReason::NoKernelFamily, why);
  OpGroup merged = united(groups[producer], groups[consumer]);
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
struct FormGroupsPass : detail::GroupingPass<FormGroupsPass, impl::FusecFormGroupsBase> {
  using GroupingPass::GroupingPass;
  void stage(detail::Grouping &g) { g.run(); }
};
} // namespace
} // namespace fusec
