//===- StreamedRows.cpp - a product's row statistics in its epilogue ------===//
//
// Groups the planner formed by the streaming-reduction rule without a
// second product (schedule/RowStatsForm.h; transforms/FormAttention.cpp):
// a product, the elementwise ops on its output, the row max m and sum l of
// exp(x - m) over its columns, and the ops on m and l (log(l) + m). It runs
// on fusec's GEMM with a statistics epilogue (codegen/RowStatsEpilogue.cpp):
// the Hopper TMA + wgmma kernel where it takes the product, else the
// portable one (rowStatsPath). Each output tile reduces its rows to
// partial (max, sum) pairs and the last tile of a row tile merges them.
// Its time is that GEMM's on the group's bytes (the product's operands;
// the logits are never written) and flops (the Hopper kernel's price has
// its epilogue's arithmetic in it), plus, on the portable kernel, the
// epilogue's work on every element of the product.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/schedule/RowStatsForm.h"

namespace fusec {
namespace {

// The portable kernel's epilogue rate over the product's elements (the
// logits' ops, the max, an exponential, the shuffles and the pair's
// store), which its GEMM price leaves out: fitted to 4096 x 131072 x 128 on
// the H200 (bench/NOTES.md, "the streamed row statistics"), where the
// products are short and the epilogue is most of the time. The Hopper
// kernel's GEMM price counts the epilogue's ops at its rate already, within
// 20% of the three shapes measured there.
constexpr double kPortableEpilogueElementsPerSec = 0.86e12;

} // namespace

namespace families {
namespace {

class StreamedRows final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::StreamedRows; }
  GroupKind kind() const override { return GroupKind::StreamedRows; }
  std::string reject(FusionOp fusion, const FamilyTarget &) const override {
    std::string why;
    if (rowStatsOf(fusion, &why))
      return "";
    return why.empty() ? "not a row max and sum of exponentials over a product" : why;
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    std::optional<RowStatsMatch> m = rowStatsOf(fusion);
    if (!m)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: streamed_rows group without its match");
    return codegen::detail::generateGemm(fusion, rowStatsPath(*m, t.arch), t.profile, t.arch,
                                         t.gemm);
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    // Without the group's match (rowStatsSeconds has it): the portable GEMM.
    return predictSeconds(c, p, KernelFamily::Fusec);
  }
};

} // namespace

const KernelFamilyDef &streamedRows() {
  static const StreamedRows family;
  return family;
}

double rowStatsSeconds(const RowStatsMatch &m, const Cost &c, const DeviceProfile &p) {
  const KernelFamily path = rowStatsPath(m, p.arch);
  const double elements = static_cast<double>(m.batch * m.rows * m.cols);
  return predictSeconds(c, p, path) +
         (path == KernelFamily::Fusec ? elements / kPortableEpilogueElementsPerSec : 0.0);
}

} // namespace families
} // namespace fusec
