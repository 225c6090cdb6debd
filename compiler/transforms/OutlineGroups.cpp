//===- OutlineGroups.cpp - -fusec-outline-groups: groups become fusions ---===//
//
// The last planner pass: each recorded group becomes one fusec.fusion with
// its schedule and cost (FusionOutlining.cpp), and the planner's marks
// leave the IR.
//
//===----------------------------------------------------------------------===//
#include "compiler/transforms/FusionOutlining.h"
#include "compiler/transforms/Grouping.h"
#include "compiler/transforms/PassProfile.h"
#include "compiler/transforms/Passes.h"

namespace fusec {
#define GEN_PASS_DEF_FUSECOUTLINEGROUPS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

struct OutlineGroupsPass : impl::FusecOutlineGroupsBase<OutlineGroupsPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<DeviceProfile> profile = passProfile(func, device, copyBytesPerSec, smCount, arch);
    if (!profile || failed(outlineGroups(func, detail::recordedGroups(func), *profile)))
      return signalPassFailure();
    detail::dropGroupMarks(func);
  }
};

} // namespace
} // namespace fusec
