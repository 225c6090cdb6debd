//===- FormAttention.cpp - -fusec-form-attention: streamed softmaxes ------===//
//
// The first planner pass: each softmax that rescales a contraction
// (schedule/AttentionForm.h) becomes one group before the greedy merges,
// which then cannot take its ops apart (classifyGroup names the group
// attention and refuses other ops in it). The matmuls' products that match
// but that the kernel declines stay to the other passes, their reason
// recorded.
//
//===----------------------------------------------------------------------===//
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/GroupSchedule.h"
#include "compiler/transforms/FusionOutlining.h"
#include "compiler/transforms/PassProfile.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace fusec {
#define GEN_PASS_DEF_FUSECFORMATTENTION
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

struct FormAttentionPass : impl::FusecFormAttentionBase<FormAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<DeviceProfile> profile = passProfile(func, device, copyBytesPerSec, smCount, arch);
    if (!profile)
      return signalPassFailure();
    std::vector<Operation *> ops = computeOps(func);
    llvm::DenseMap<Operation *, int64_t> position, group;
    for (size_t i = 0; i < ops.size(); ++i)
      position[ops[i]] = static_cast<int64_t>(i);
    Builder b(func.getContext());
    SmallVector<Attribute> declined;
    for (Operation *op : ops) {
      std::string why;
      std::optional<AttentionMatch> m = matchAttention(op, why);
      if (m && attentionTiles(*m, *profile).sharedBytes > profile->smemPerBlock) {
        why = "the attention kernel's tiles of head dim " + std::to_string(m->headDim) +
              " need " + std::to_string(attentionTiles(*m, *profile).sharedBytes) +
              " bytes of shared memory; a block of the " + profile->name + " has " +
              std::to_string(profile->smemPerBlock);
        m.reset();
      }
      if (!m) {
        if (!why.empty()) {
          auto mm = cast<MatmulOp>(op);
          Operation *scores = mm.getLhs().getDefiningOp();
          declined.push_back(DecisionAttr::get(
              b.getContext(), nodeLabel(scores ? scores : op), nodeLabel(op),
              DecisionReason::NoKernelFamily, why, FloatAttr(), FloatAttr()));
        }
        continue;
      }
      if (llvm::any_of(m->ops, [&](Operation *o) { return group.count(o); }))
        continue;
      for (Operation *o : m->ops)
        group[o] = position[m->ops.front()];
    }
    if (!declined.empty()) {
      SmallVector<Attribute> all;
      if (auto old = func->getAttrOfType<ArrayAttr>("fusec.rejected"))
        all.append(old.begin(), old.end());
      all.append(declined.begin(), declined.end());
      func->setAttr("fusec.rejected", b.getArrayAttr(all));
    }
    if (group.empty())
      return;
    // Every other op starts in a group of its own, numbered in program
    // order as -fusec-form-groups would.
    for (Operation *op : ops) {
      auto it = group.find(op);
      op->setAttr("fusec.group",
                  b.getI64IntegerAttr(it != group.end() ? it->second : position[op]));
    }
  }
};

} // namespace
} // namespace fusec
