//===- ColumnStreamed.cpp - a one-phase column reduction, rows split ------===//
//
// A column reduction that reads its data once (one phase, per-column
// outputs) streams it with 16-byte loads, each tile's reduced rows split
// over up to 32 blocks whose partial results the last one combines
// (codegen/ColumnReductionKernel.cpp). Past 32 splits the cooperative
// family is faster (docs/reductions.md), so this one declines there.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/ReductionPhases.h"
#include "compiler/families/Families.h"

namespace fusec::families {
namespace {

constexpr int64_t kMaxSplits = 32;

class ColumnStreamed final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::ColumnStreamed; }
  GroupKind kind() const override { return GroupKind::ColumnReduction; }
  std::string reject(FusionOp fusion, const FamilyTarget &t) const override {
    if (!codegen::detail::readsOnce(fusion))
      return "reads its data more than once (several phases, or per-row outputs)";
    return rejectUnlessEmitted(*this, fusion, t);
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateColumnReduction(fusion, t.profile, kMaxSplits);
  }
};

} // namespace

const KernelFamilyDef &columnStreamed() {
  static const ColumnStreamed family;
  return family;
}

} // namespace fusec::families
