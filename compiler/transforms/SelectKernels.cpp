//===- SelectKernels.cpp - each fused group's kernel family ---------------===//
//
// Asks the kernel-family registry (compiler/families/) for every fused group
// that has no family yet: the first family of the group's kind that takes it
// runs it, and the families asked before it are recorded with their reasons
// (`family_rejections`) for `fusec explain`. Matmul groups carry the
// planner's choice from outlining. Code generation then emits each group
// with its family alone.
//
//===----------------------------------------------------------------------===//
#include "compiler/cost/CostModel.h"
#include "compiler/families/KernelFamily.h"
#include "compiler/families/LibraryMatmul.h"
#include "compiler/transforms/PassProfile.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

#define DEBUG_TYPE "fusec-select-kernels"

namespace fusec {
#define GEN_PASS_DEF_FUSECSELECTKERNELS
#include "compiler/transforms/Passes.h.inc"
} // namespace fusec

using namespace mlir;

namespace fusec {
namespace {

struct SelectKernelsPass : impl::FusecSelectKernelsBase<SelectKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<DeviceProfile> profile =
        passProfile(func, device, copyBytesPerSec, smCount);
    if (!profile)
      return signalPassFailure();
    FamilyTarget target{*profile, arch.empty() ? profile->arch : std::string(arch)};
    Builder b(func.getContext());
    WalkResult result = func.walk([&](FusionOp fusion) {
      // A group the planner gave to cuBLASLt's epilogue: what the library
      // applies, read off its body once.
      if (fusion.getFamily() == KernelFamily::LibraryEpilogue) {
        llvm::Expected<LibraryEpilogueAttr> e = libraryEpilogueOf(fusion);
        if (!e) {
          fusion.emitError(llvm::toString(e.takeError()));
          return WalkResult::interrupt();
        }
        fusion->setAttr("library_epilogue", *e);
      }
      if (fusion.getFamily())
        return WalkResult::advance();
      std::vector<FamilyRejection> rejected;
      llvm::Expected<KernelFamily> family = selectFamily(fusion, target, rejected);
      if (!family) {
        fusion.emitError(llvm::toString(family.takeError()));
        return WalkResult::interrupt();
      }
      fusion.setFamily(*family);
      // Priced again by the family that runs it (KernelFamilyDef::seconds):
      // a group without a product costs its bytes and its one launch.
      Cost c;
      if (auto bytes = fusion->getAttrOfType<IntegerAttr>("bytes_fused"))
        c.bytes = bytes.getInt();
      if (auto flops = fusion->getAttrOfType<IntegerAttr>("flops"))
        c.flops = flops.getInt();
      c.launches = 1;
      for (Operation &op : fusion.getBodyBlock())  // an all-reduce ahead of the rows
        if (isCollective(&op))
          c += opFlops(&op);
      const double seconds = predictSeconds(c, *profile, *family);
      fusion->setAttr("predicted_us", b.getF64FloatAttr(seconds * 1e6));
      // A group of one op is, unfused, the same kernel.
      auto launches = fusion->getAttrOfType<IntegerAttr>("launches_unfused");
      if (launches && launches.getInt() == 1 && fusion->hasAttr("unfused_chained_us")) {
        const double chained = std::max(seconds - profile->launchSeconds,
                                        profile->chainedLaunchSeconds);
        fusion->setAttr("unfused_us", b.getF64FloatAttr(seconds * 1e6));
        fusion->setAttr("unfused_chained_us", b.getF64FloatAttr(chained * 1e6));
        fusion->setAttr("unfused_lead_us", b.getF64FloatAttr((seconds - chained) * 1e6));
      }
      if (rejected.empty())
        return WalkResult::advance();
      SmallVector<Attribute> records;
      for (const FamilyRejection &r : rejected)
        records.push_back(b.getDictionaryAttr({
            b.getNamedAttr("family", KernelFamilyAttr::get(b.getContext(), r.family)),
            b.getNamedAttr("reason", b.getStringAttr(r.reason)),
        }));
      fusion->setAttr("family_rejections", b.getArrayAttr(records));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace fusec
