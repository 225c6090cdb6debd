//===- RowReduction.cpp - rows held on chip, fp32 statistics --------------===//
//
// Reductions over the innermost dims (or any dims, read by gather): each row
// is held in registers or shared memory while its statistics are reduced in
// fp32, several reductions a row, a long row split over blocks
// (codegen/RowReductionKernel.cpp, docs/reductions.md).
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/families/CollectiveStep.h"

namespace fusec::families {
namespace {

class RowReduction final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::RowReduction; }
  GroupKind kind() const override { return GroupKind::RowReduction; }
  std::string reject(FusionOp, const FamilyTarget &) const override { return ""; }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateRowReduction(fusion, t.profile);
  }
  /// With an all-reduce ahead of its rows: that exchange too.
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    return predictSeconds(c, p) + reducedFirstSeconds(c, p);
  }
};

} // namespace

const KernelFamilyDef &rowReduction() {
  static const RowReduction family;
  return family;
}

} // namespace fusec::families
