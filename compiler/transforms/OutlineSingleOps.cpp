//===- OutlineSingleOps.cpp - one kernel per compute op (--no-fuse) -------===//
#include "compiler/transforms/FusionOutlining.h"
#include "compiler/transforms/PassProfile.h"
#include "compiler/transforms/Passes.h"

#define DEBUG_TYPE "fusec-outline-single-ops"

namespace fusec {
#define GEN_PASS_DEF_FUSECOUTLINESINGLEOPS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

struct OutlineSingleOpsPass : impl::FusecOutlineSingleOpsBase<OutlineSingleOpsPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<DeviceProfile> profile =
        passProfile(getOperation(), device, copyBytesPerSec, smCount);
    if (!profile)
      return signalPassFailure();
    std::vector<OpGroup> groups;
    for (Operation *op : computeOps(getOperation()))
      groups.push_back({op});
    if (failed(outlineGroups(getOperation(), groups, *profile)))
      signalPassFailure();
  }
};

} // namespace
} // namespace fusec
