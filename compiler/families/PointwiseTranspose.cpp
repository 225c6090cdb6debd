//===- PointwiseTranspose.cpp - pointwise through shared-memory tiles -----===//
//
// A pointwise group with an input contiguous along another dim than its
// outputs (a transpose) reads and writes both along their contiguous dims
// through 32 x 32 tiles in shared memory (codegen/PointwiseTranspose.cpp);
// asked before the plain pointwise family.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/cost/CostModel.h"

namespace fusec::families {
namespace {

class PointwiseTranspose final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::PointwiseTranspose; }
  GroupKind kind() const override { return GroupKind::Pointwise; }
  std::string reject(FusionOp fusion, const FamilyTarget &) const override {
    return codegen::detail::generateTransposedPointwise(fusion)
               ? ""
               : "no input is contiguous along another dim than the outputs";
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &) const override {
    if (std::optional<KernelSpec> spec = codegen::detail::generateTransposedPointwise(fusion))
      return std::move(*spec);
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: no transposed input to tile");
  }
  /// The tiles' round trip through shared memory and their partial last
  /// rows: 84% of the copy rate measured (transpose_bias, 268 MB, on an H200;
  /// bench/records/h200.json).
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    return predictSeconds(c, p) + floorSeconds(c, p) * (1 / 0.84 - 1);
  }
};

} // namespace

const KernelFamilyDef &pointwiseTranspose() {
  static const PointwiseTranspose family;
  return family;
}

} // namespace fusec::families
