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
    return codegen::detail::generateGemm(fusion, t.profile, t.arch, t.gemm);
  }

private:
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
