//===- Pointwise.cpp - one thread a vector of outputs, 16-byte accesses ---===//
//
// Every output has the group's domain shape; each thread computes a 16-byte
// vector of it (or one element where rows are not whole vectors), reading
// inputs through their broadcast strides (codegen/PointwiseKernel.cpp). It
// takes every pointwise group: the last family asked for them.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"

namespace fusec::families {
namespace {

class Pointwise final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::Pointwise; }
  GroupKind kind() const override { return GroupKind::Pointwise; }
  std::string reject(FusionOp, const FamilyTarget &) const override { return ""; }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generatePointwise(fusion, t.profile);
  }
};

} // namespace

const KernelFamilyDef &pointwise() {
  static const Pointwise family;
  return family;
}

} // namespace fusec::families
