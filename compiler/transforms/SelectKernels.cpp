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
#include "compiler/families/KernelFamily.h"
#include "compiler/families/LibraryMatmul.h"
#include "compiler/transforms/PassProfile.h"
#include "compiler/transforms/Passes.h"

#include "mlir/IR/Builders.h"

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
