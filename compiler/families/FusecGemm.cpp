//===- FusecGemm.cpp - fusec's GEMM and GEMV kernels, with the epilogue ---===//
//
// Matmul groups that the planner gives to fusec's own kernels, one family a
// path the cost model prices apart (GemmPath in CostModel.h): the portable
// mma.sync GEMM, the Hopper TMA + wgmma GEMM (alone, as a dual product, or
// sibling products side by side), the dot-product kernel for 1-8 rows and
// its tensor-core and wgmma forms for 9-64 rows, and the portable GEMM on
// batches of few-row products. The planner picks the path
// (transforms/MatmulPaths.cpp, FuseSiblings.cpp); the kernel and its tile
// configuration (heuristic, tuned or autotuning candidate) come from
// codegen/GemmLaunch.cpp (docs/matmul.md).
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"

namespace fusec::families {
namespace {

class FusecGemm final : public KernelFamilyDef {
public:
  explicit FusecGemm(KernelFamily path) : path(path) {}
  KernelFamily id() const override { return path; }
  GroupKind kind() const override { return GroupKind::Matmul; }
  std::string reject(FusionOp, const FamilyTarget &) const override {
    return "matmul groups run as the planner chose (MatmulPaths.cpp)";
  }
  llvm::Expected<KernelSpec> emit(FusionOp fusion, const FamilyTarget &t) const override {
    return codegen::detail::generateGemm(fusion, path, t.profile, t.arch, t.gemm);
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    return rooflineSeconds(c, p, rates(c, p));
  }

private:
  KernelRates rates(const Cost &c, const DeviceProfile &p) const {
    KernelRates r{p.gemmBandwidthFraction, p.gemmFlopsPerSec};
    // A prologue computes operand elements as they are loaded, 8 along the
    // contiguous dim at a time, and the kernels wait for them: the portable
    // GEMM into its stages, the dot-product kernel A into shared memory
    // ahead of its weight stream. Charged at 2 T elements/s, the
    // dot-product kernel's rate at decode, between the portable GEMM's
    // (docs/matmul.md, "Prologues").
    constexpr double kPrologueElementsPerSec = 2e12;
    auto portable = [&] {
      r.epilogueSeconds = afterProductsSeconds(c, p);
      r.epilogueSeconds += static_cast<double>(c.prologueTileElements) / kPrologueElementsPerSec;
    };
    switch (path) {
    case KernelFamily::FusecWgmma: {
      if (p.wgmmaFlopsPerSec > 0)
        r.tensorFlopsPerSec = p.wgmmaFlopsPerSec;
      // The TMA loads a residual while the products run, and the stores
      // overlap the next tile; what remains is the epilogue's arithmetic,
      // which the tensor cores wait for (bias, erf gelu and residual cost
      // 69 us over the product at 8192 x 4096 -> 8192; docs/matmul.md, "How
      // a group runs"): each elementwise op of the group, and each element
      // of an input the TMA loads into the epilogue (waiting on its boxes),
      // about 15 times slower than the SMs' fp32 rate. Its other epilogue
      // inputs are read after the products.
      r.epilogueSeconds = (static_cast<double>(c.flops) +
                           static_cast<double>(c.tmaEpilogueBytes) / 2) /
                              (p.fp32FlopsPerSec / 15) +
                          static_cast<double>(c.epilogueBytes - c.tmaEpilogueBytes) /
                              (0.5 * p.hbmBytesPerSec);
      break;
    }
    case KernelFamily::FusecGemv:
      // It reads the epilogue's inputs once per output element, a small
      // part of its weight stream.
      r.bandwidthFraction = p.gemvBandwidthFraction;
      r.epilogueSeconds = static_cast<double>(c.prologueGemvElements) / kPrologueElementsPerSec;
      break;
    case KernelFamily::FusecTensorGemv:
      // Streams at 56-76% of the copy rate on the 32-row Llama layers
      // (docs/matmul.md, "How a group runs"): priced as fusec's GEMM.
      break;
    case KernelFamily::FusecWgmmaGemv:
      // Faster than cuBLASLt at 32 rows in a stream of layers (its weights
      // stream during the layer ahead's tail), and close to it alone
      // (docs/matmul.md, "How a group runs"): priced as cuBLASLt (ties go
      // to fusec's kernel, which applies the epilogue in place). A group's
      // cost has no notion of the kernel ahead, so the stream's gain is not
      // priced.
      r.bandwidthFraction = p.libraryBandwidthFraction;
      break;
    case KernelFamily::FusecBatchedRows:
      // The rate of decode attention scores on the H100, 32 matrices of
      // 1 x 128 @ 128 x 4097: 18% of the copy rate (docs/cost-model.md,
      // "Predicted time").
      r.bandwidthFraction = 0.18;
      portable();
      break;
    case KernelFamily::FusecBatchedStream:
      // Decode attention's probabilities @ V, 256 matrices of 4 x 4096 @
      // 4096 x 128 (277 MB), stream at 83-88% of the copy rate on the H100
      // (docs/cost-model.md, "How close it comes"): priced as cuBLASLt.
      r.bandwidthFraction = p.libraryBandwidthFraction;
      portable();
      break;
    default:  // the portable mma.sync GEMM
      portable();
      break;
    }
    return r;
  }

  KernelFamily path;
};

} // namespace

const KernelFamilyDef &fusecGemm(KernelFamily path) {
  static const FusecGemm portable(KernelFamily::Fusec), wgmma(KernelFamily::FusecWgmma),
      gemv(KernelFamily::FusecGemv), tensorGemv(KernelFamily::FusecTensorGemv),
      wgmmaGemv(KernelFamily::FusecWgmmaGemv), batchedRows(KernelFamily::FusecBatchedRows),
      batchedStream(KernelFamily::FusecBatchedStream);
  switch (path) {
  case KernelFamily::FusecWgmma: return wgmma;
  case KernelFamily::FusecGemv: return gemv;
  case KernelFamily::FusecTensorGemv: return tensorGemv;
  case KernelFamily::FusecWgmmaGemv: return wgmmaGemv;
  case KernelFamily::FusecBatchedRows: return batchedRows;
  case KernelFamily::FusecBatchedStream: return batchedStream;
  default: return portable;
  }
}

} // namespace fusec::families

namespace fusec {

bool isFusecGemm(KernelFamily f) {
  switch (f) {
  case KernelFamily::Fusec:
  case KernelFamily::FusecWgmma:
  case KernelFamily::FusecGemv:
  case KernelFamily::FusecTensorGemv:
  case KernelFamily::FusecWgmmaGemv:
  case KernelFamily::FusecBatchedRows:
  case KernelFamily::FusecBatchedStream:
    return true;
  default:
    return false;
  }
}

} // namespace fusec
