//===- Collective.cpp - all_reduce, all_gather, reduce_scatter ------------===//
//
// A collective runs between the kernels before and after it (plan step
// `collective`), on the program's stream, one of two ways:
//   - NCCL: its latency plus the bytes each rank sends over the link at the
//     bus bandwidth NCCL reaches (Cost::linkBytes, DeviceProfile), the HBM
//     traffic of its own kernels hidden under the link's;
//   - a small all-reduce of floats, where it is cheaper: fusec's one-shot
//     kernel over peer memory (codegen/PeerAllReduce.cpp), a launch and a
//     flag round trip plus each rank reading every other rank's tensor.
// Which one is decided here, for the price and the plan alike.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/CollectiveStep.h"
#include "compiler/families/Families.h"
#include "compiler/codegen/KernelSpec.h"
#include "compiler/cost/CostModel.h"
#include "compiler/plan/PeerRegion.h"

#include <algorithm>
#include <optional>

namespace fusec {
namespace families {
namespace {

double ncclSeconds(const Cost &c, const DeviceProfile &p) {
  return p.collectiveSeconds + double(c.linkBytes) / p.linkBytesPerSec;
}

/// The one-shot kernel's time, where it can run the collective priced `c`.
std::optional<double> peerSeconds(const Cost &c, const DeviceProfile &p) {
  if (c.allReduceBytes <= 0 || c.allReduceBytes > peer::kMaxBytes || c.allReduceRanks < 2 ||
      c.allReduceRanks > peer::kMaxRanks || p.peerCollectiveSeconds <= 0)
    return std::nullopt;
  return oneShotLatencySeconds(p, false) +
         double(c.allReduceBytes) * (c.allReduceRanks - 1) / p.linkBytesPerSec;
}

class Collective final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::Collective; }
  GroupKind kind() const override { return GroupKind::Collective; }
  bool isLibrary() const override { return true; }
  std::string reject(FusionOp, const FamilyTarget &) const override { return ""; }
  llvm::Expected<KernelSpec> emit(FusionOp, const FamilyTarget &) const override {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: a collective has no kernel to emit");
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    return overPeerMemory(c, p) ? *peerSeconds(c, p) : ncclSeconds(c, p);
  }
};

} // namespace

bool overPeerMemory(const Cost &c, const DeviceProfile &p) {
  std::optional<double> peer = peerSeconds(c, p);
  return peer && *peer < ncclSeconds(c, p);
}

double oneShotLatencySeconds(const DeviceProfile &p, bool inRowKernel) {
  // In a row kernel, less the launch that kernel already has.
  return inRowKernel ? std::max(0.0, p.peerCollectiveSeconds - std::max(p.chainedLaunchSeconds, 0.0))
                     : p.peerCollectiveSeconds;
}

double reducedFirstSeconds(const Cost &c, const DeviceProfile &p) {
  if (c.allReduceBytes <= 0 || !overPeerMemory(c, p))
    return 0;
  return *peerSeconds(c, p) - oneShotLatencySeconds(p, false) + oneShotLatencySeconds(p, true);
}

const KernelFamilyDef &collective() {
  static const Collective family;
  return family;
}

} // namespace families

llvm::Error collectiveStep(FusionOp fusion, int in, int out, const DeviceProfile &profile,
                           PlanStep &step) {
  for (mlir::Operation &op : fusion.getBodyBlock()) {
    if (!isCollective(&op))
      continue;
    PlanCollective &c = step.collective;
    c.op = op.getName().stripDialect().str();
    c.reduce = "sum";
    if (auto r = llvm::dyn_cast<AllReduceOp>(op))
      c.reduce = r.getKind().str();
    if (auto axis = op.getAttrOfType<mlir::IntegerAttr>("axis"))
      c.axis = axis.getInt();
    c.ranks = int(op.getAttrOfType<mlir::IntegerAttr>("ranks").getInt());
    c.src = in;
    c.dst = out;
    step.kind = PlanStep::Kind::Collective;
    const Cost cost = opFlops(&op);
    c.peer = families::overPeerMemory(cost, profile);
    if (c.peer) {
      mlir::Value v = op.getOperand(0);
      codegen::KernelSpec spec = codegen::peerAllReduceKernel(
          step.name, dtypeOf(v), c.reduce, cost.allReduceBytes / dtypeBytes(dtypeOf(v)));
      static_cast<KernelLaunch &>(step.kernel) = spec;
      step.kernel.args = {in, out};
      step.kernel.inputs = 1;
    }
    return llvm::Error::success();
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal error: a collective group without a collective");
}

void reducedFirstStep(FusionOp fusion, const std::vector<int> &in, PlanStep &step) {
  for (mlir::Operation &op : fusion.getBodyBlock()) {
    auto r = llvm::dyn_cast<AllReduceOp>(op);
    auto arg = r ? llvm::dyn_cast<mlir::BlockArgument>(r.getOperand()) : mlir::BlockArgument();
    if (!arg)
      continue;
    PlanCollective &c = step.collective;
    c.op = "all_reduce";
    c.reduce = r.getKind().str();
    c.ranks = int(op.getAttrOfType<mlir::IntegerAttr>("ranks").getInt());
    c.src = c.dst = in.at(arg.getArgNumber());
    c.peer = true;
  }
}

} // namespace fusec
