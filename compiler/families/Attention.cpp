//===- Attention.cpp - a softmax streamed between two products ------------===//
//
// Groups the planner formed by the streaming-reduction rule
// (schedule/AttentionForm.h; transforms/FormAttention.cpp): S = Q K^T, the
// elementwise ops on it, a row softmax and P V in one kernel
// (codegen/AttentionKernel.cpp), S and P never in memory. Its time: both
// products at fusec's mma.sync rate, less what the softmax between them
// costs (an exponential per score, the rows' max and sum, the rescaling),
// or its bytes at the copy rate, whichever is longer. Under a causal mask
// outlining prices only the tiles the kernel computes.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/schedule/AttentionForm.h"

namespace fusec::families {
namespace {

class Attention final : public KernelFamilyDef {
public:
  KernelFamily id() const override { return KernelFamily::Attention; }
  GroupKind kind() const override { return GroupKind::Attention; }
  std::string reject(FusionOp fusion, const FamilyTarget &) const override {
    MatmulOp output;
    for (mlir::Operation &op : fusion.getBodyBlock())
      if (auto mm = llvm::dyn_cast<MatmulOp>(op))
        output = mm;
    std::string why;
    if (!output || !matchAttention(output, why))
      return why.empty() ? "not a softmax streamed between two products" : why;
    return "";
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateAttention(fusion, t.profile);
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    // The softmax between the products holds the tensor cores about a
    // quarter of the time: 0.65-0.88 of the GEMM's rate measured on long
    // sequences (bench/NOTES.md, "the first streamed-softmax kernel").
    constexpr double kSoftmaxShare = 0.75;
    return rooflineSeconds(c, p, {p.gemmBandwidthFraction, p.gemmFlopsPerSec * kSoftmaxShare});
  }
};

} // namespace

const KernelFamilyDef &attention() {
  static const Attention family;
  return family;
}

} // namespace fusec::families
