//===- StreamedRows.cpp - a product's row statistics in its epilogue ------===//
//
// Groups the planner formed by the streaming-reduction rule without a
// second product (schedule/RowStatsForm.h; transforms/FormAttention.cpp):
// a product, the elementwise ops on its output, the row max m and sum l of
// exp(x - m) over its columns, and the ops on m and l (log(l) + m). It runs
// on fusec's portable GEMM with a statistics epilogue
// (codegen/RowStatsEpilogue.cpp): each output tile reduces its rows to
// partial (max, sum) pairs, and the last tile of a row tile merges them.
// Its time is the portable GEMM's on the group's bytes (the product's
// operands; the logits are never written) plus the pairs' round trip.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/schedule/RowStatsForm.h"

namespace fusec::families {
namespace {

class StreamedRows final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::StreamedRows; }
  GroupKind kind() const override { return GroupKind::StreamedRows; }
  std::string reject(FusionOp fusion, const FamilyTarget &) const override {
    std::string why;
    for (mlir::Operation &op : fusion.getBodyBlock())
      if (llvm::isa<SumOp>(op) && matchRowStats(&op, why))
        return "";
    return why.empty() ? "not a row max and sum of exponentials over a product" : why;
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateGemm(fusion, KernelFamily::Fusec, t.profile, t.arch, t.gemm);
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    return predictSeconds(c, p, KernelFamily::Fusec);
  }
};

} // namespace

const KernelFamilyDef &streamedRows() {
  static const StreamedRows family;
  return family;
}

} // namespace fusec::families
