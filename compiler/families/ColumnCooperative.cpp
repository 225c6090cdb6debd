//===- ColumnCooperative.cpp - teams of blocks keep a column on chip ------===//
//
// Teams of blocks split a column tile's reduced rows, keep their chunk in
// shared memory and exchange partial results: through distributed shared
// memory within a thread block cluster on sm_90+, through global memory and
// a grid-resident team barrier before (codegen/CooperativeColumnKernel.cpp).
// It declines when a chunk does not fit on chip.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"

namespace fusec::families {
namespace {

class ColumnCooperative final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::ColumnCooperative; }
  GroupKind kind() const override { return GroupKind::ColumnReduction; }
  std::string reject(FusionOp fusion, const FamilyTarget &t) const override {
    return rejectUnlessEmitted(*this, fusion, t);
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateCooperativeColumnReduction(fusion, t.profile, t.clusters());
  }
};

} // namespace

const KernelFamilyDef &columnCooperative() {
  static const ColumnCooperative family;
  return family;
}

} // namespace fusec::families
