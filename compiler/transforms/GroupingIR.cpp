//===- GroupingIR.cpp - the planner's groups as attributes of their ops ---===//
//
// Between planner passes a group is the compute ops carrying one
// `fusec.group` index; copies made by recomputation also carry
// `fusec.copy` (they are members of groups, not ops of the graph the merge
// walk visits). Outlining drops both.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/Grouping.h"
#include "compiler/families/CollectiveStep.h"
#include "compiler/transforms/PassProfile.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>

using namespace mlir;

namespace fusec::detail {
namespace {

constexpr llvm::StringLiteral kGroup = "fusec.group", kCopy = "fusec.copy";

/// The groups `func` records and the ops the merge walk visits.
std::pair<std::vector<OpGroup>, std::vector<Operation *>> readGroups(func::FuncOp func) {
  std::vector<Operation *> ops = computeOps(func);
  int64_t fresh = 0;
  for (Operation *op : ops)
    if (auto index = op->getAttrOfType<IntegerAttr>(kGroup))
      fresh = std::max(fresh, index.getInt() + 1);
  // Ops without an index follow the recorded groups, one group each.
  std::map<int64_t, OpGroup> byIndex;
  std::vector<Operation *> visited;
  for (Operation *op : ops) {
    auto index = op->getAttrOfType<IntegerAttr>(kGroup);
    byIndex[index ? index.getInt() : fresh++].push_back(op);
    if (!op->hasAttr(kCopy))
      visited.push_back(op);
  }
  std::vector<OpGroup> groups;
  for (auto &[index, g] : byIndex)
    groups.push_back(std::move(g));
  return {std::move(groups), std::move(visited)};
}

/// `func`'s decision list `name` with `added` appended.
ArrayAttr appended(func::FuncOp func, StringRef name,
                   const std::vector<Grouping::Decision> &added) {
  Builder b(func.getContext());
  SmallVector<Attribute> attrs;
  if (auto old = func->getAttrOfType<ArrayAttr>(name))
    attrs.append(old.begin(), old.end());
  for (const auto &r : added) {
    // The two ways' predictions where the cost model decided.
    FloatAttr fused = r.fusedUs >= 0 ? b.getF64FloatAttr(r.fusedUs) : FloatAttr();
    FloatAttr apart = r.fusedUs >= 0 ? b.getF64FloatAttr(r.apartUs) : FloatAttr();
    attrs.push_back(DecisionAttr::get(b.getContext(), r.producer, r.consumer, r.code, r.reason,
                                      fused, apart));
  }
  return b.getArrayAttr(attrs);
}

} // namespace

std::vector<OpGroup> recordedGroups(func::FuncOp func) { return readGroups(func).first; }

void Grouping::record(func::FuncOp func) const {
  Builder b(func.getContext());
  llvm::SmallPtrSet<Operation *, 32> visited(ops.begin(), ops.end());
  int64_t index = 0;
  for (const OpGroup &g : groups) {
    if (g.empty())
      continue;
    for (Operation *op : g) {
      op->setAttr(kGroup, b.getI64IntegerAttr(index));
      if (!visited.count(op))
        op->setAttr(kCopy, b.getUnitAttr());
    }
    ++index;
  }
  func->setAttr("fusec.rejected", appended(func, "fusec.rejected", rejections));
  if (!recomputations.empty())
    func->setAttr("fusec.recomputed", appended(func, "fusec.recomputed", recomputations));
}

LogicalResult runGroupingStage(func::FuncOp func, const PlannerSettings &o,
                               llvm::function_ref<void(Grouping &)> stage) {
  std::optional<DeviceProfile> profile = passProfile(func, o.device, o.copyBytesPerSec, o.smCount, o.arch);
  if (!profile)
    return failure();
  // The all-reduces fusec's one-shot kernel runs (the collective family's
  // choice): only those may begin a row kernel (GroupSchedule.h).
  func.walk([&](AllReduceOp r) {
    if (families::overPeerMemory(opFlops(r), *profile))
      r->setAttr(kOneShotAttr, UnitAttr::get(r->getContext()));
    else
      r->removeAttr(kOneShotAttr);
  });
  auto [groups, visited] = readGroups(func);
  // Matmul groups have chosen how they run once a matmul carries its family.
  bool chosen = llvm::any_of(groups, [](const OpGroup &g) {
    return llvm::any_of(g, [](Operation *op) { return isa<MatmulOp>(op) && op->hasAttr("fusec.family"); });
  });
  Grouping grouping(std::move(visited), std::move(groups), *profile, o.gemm,
                    profile->arch, chosen);
  stage(grouping);
  grouping.record(func);
  return success();
}

void dropGroupMarks(Operation *root) {
  root->walk([](Operation *op) {
    op->removeAttr(kGroup);
    op->removeAttr(kCopy);
  });
}

} // namespace fusec::detail
