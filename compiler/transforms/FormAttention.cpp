//===- FormAttention.cpp - -fusec-form-attention: streamed softmaxes ------===//
//
// The first planner pass: each softmax that rescales a contraction
// (schedule/AttentionForm.h) becomes one group before the greedy merges,
// which then cannot take its ops apart (classifyGroup names the group
// attention and refuses other ops in it). So does each row max and sum of
// exponentials over a product (schedule/RowStatsForm.h) where streaming it
// is predicted faster than the product followed by a row reduction. The
// matches that the kernels decline stay to the other passes, their reason
// recorded.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/KernelFamily.h"
#include "compiler/schedule/AttentionForm.h"
#include "compiler/schedule/RowStatsForm.h"
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

/// The streamed row statistics against the product on cuBLASLt followed
/// by a row reduction of its output: empty when streaming is faster (or
/// `gemm` is "fusec": fusec's GEMM for every product), else why it is not
/// taken.
std::string rowStatsSlower(const RowStatsMatch &m, const DeviceProfile &p, llvm::StringRef gemm) {
  if (gemm == "cublaslt")
    return "products run on cuBLASLt (--gemm cublaslt): the row statistics are not streamed";
  double fused = families::rowStatsSeconds(m, groupCost(m.ops), p);
  MatmulOp product = m.product;
  std::vector<Operation *> rest;
  for (Operation *op : m.ops)
    if (op != product.getOperation())
      rest.push_back(op);
  double unfused = predictSeconds(unfusedCost(product), p, libraryGemmPath(product)) +
                   predictSeconds(groupCost(rest), p, KernelFamily::RowReduction);
  if (fused < unfused || gemm == "fusec")
    return "";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "streaming the row statistics on fusec's %s GEMM is predicted at %.1f us, "
                "the product on cuBLASLt and a row reduction at %.1f us",
                rowStatsPath(m, p.arch) == KernelFamily::FusecWgmma ? "wgmma" : "portable",
                fused * 1e6, unfused * 1e6);
  return buf;
}

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
    auto decline = [&](Operation *first, Operation *last, const std::string &why) {
      declined.push_back(DecisionAttr::get(b.getContext(), nodeLabel(first), nodeLabel(last),
                                           DecisionReason::NoKernelFamily, why, FloatAttr(),
                                           FloatAttr()));
    };
    for (Operation *op : ops) {
      std::string why;
      if (isa<SumOp>(op)) {
        std::optional<RowStatsMatch> r = matchRowStats(op, why);
        if (r && (why = rowStatsSlower(*r, *profile, gemm)).empty() &&
            llvm::none_of(r->ops, [&](Operation *o) { return group.count(o); })) {
          for (Operation *o : r->ops)
            group[o] = position[r->ops.front()];
          continue;
        }
        if (!why.empty())
          decline(r ? r->product.getOperation() : op, op, why);
        continue;
      }
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
          decline(scores ? scores : op, op, why);
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
