//===- ColumnOnlineSoftmax.cpp - softmax over leading dims, one pass ------===//
//
// Softmax over the reduced (leading) dims on sm_90+: a cluster's blocks keep
// a 128-byte column tile in registers, shared memory and L2 while the
// running (max, sum) is merged through distributed shared memory, so the
// data is read from HBM once (codegen/OnlineColumnSoftmax.cpp,
// docs/reductions.md). Asked first for column reductions.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"

namespace fusec::families {
namespace {

class ColumnOnlineSoftmax final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::ColumnOnlineSoftmax; }
  GroupKind kind() const override { return GroupKind::ColumnReduction; }
  std::string reject(FusionOp fusion, const FamilyTarget &t) const override {
    if (!t.clusters())
      return "needs thread block clusters (sm_90 or newer; target " + t.arch + ")";
    return rejectUnlessEmitted(*this, fusion, t);
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateOnlineColumnSoftmax(fusion, t.profile);
  }
};

} // namespace

const KernelFamilyDef &columnOnlineSoftmax() {
  static const ColumnOnlineSoftmax family;
  return family;
}

} // namespace fusec::families
