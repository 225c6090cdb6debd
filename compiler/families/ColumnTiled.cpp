//===- ColumnTiled.cpp - column tiles, streamed or re-read per phase ------===//
//
// The column reduction that takes every group of its kind: a one-phase group
// streams with its rows split over as many blocks as fill the device; others
// re-read their tile once per phase (codegen/ColumnReductionKernel.cpp).
// Asked last for column reductions.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"

namespace fusec::families {
namespace {

class ColumnTiled final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::ColumnTiled; }
  GroupKind kind() const override { return GroupKind::ColumnReduction; }
  std::string reject(FusionOp, const FamilyTarget &) const override { return ""; }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateColumnReduction(fusion, t.profile);
  }
};

} // namespace

const KernelFamilyDef &columnTiled() {
  static const ColumnTiled family;
  return family;
}

} // namespace fusec::families
