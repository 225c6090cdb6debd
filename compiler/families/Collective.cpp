//===- Collective.cpp - all_reduce, all_gather, reduce_scatter on NCCL ----===//
//
// A collective is not a kernel of fusec's: NCCL runs it, on the program's
// stream, between the kernels before and after it (plan step `collective`).
// Its time is NCCL's latency plus the bytes each rank sends over the link
// at the bus bandwidth NCCL reaches (Cost::linkBytes, DeviceProfile), the
// HBM traffic of its own kernels hidden under the link's.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/CollectiveStep.h"
#include "compiler/families/Families.h"

namespace fusec {
namespace families {
namespace {

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
    return p.collectiveSeconds + double(c.linkBytes) / p.linkBytesPerSec;
  }
};

} // namespace

const KernelFamilyDef &collective() {
  static const Collective family;
  return family;
}

} // namespace families

llvm::Expected<PlanCollective> collectiveStep(FusionOp fusion, int in, int out) {
  for (mlir::Operation &op : fusion.getBodyBlock()) {
    if (!isCollective(&op))
      continue;
    PlanCollective c;
    c.op = op.getName().stripDialect().str();
    c.reduce = "sum";
    if (auto r = llvm::dyn_cast<AllReduceOp>(op))
      c.reduce = r.getKind().str();
    if (auto axis = op.getAttrOfType<mlir::IntegerAttr>("axis"))
      c.axis = axis.getInt();
    c.ranks = int(op.getAttrOfType<mlir::IntegerAttr>("ranks").getInt());
    c.src = in;
    c.dst = out;
    return c;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal error: a collective group without a collective");
}

} // namespace fusec
