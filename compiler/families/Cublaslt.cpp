//===- Cublaslt.cpp - matmul groups on cuBLASLt ---------------------------===//
//
// The library families: cuBLASLt computes the product, reading its operands
// in place through their strides (FusionOutlining materializes those it
// cannot); with its epilogue, it also applies a scale, a residual as C, a
// bias and gelu(tanh) where the group is exactly that
// (schedule/LibraryEpilogue.h). On batches of few-row products (decode
// attention) it runs far below its rate on one matrix, which the cost model
// prices as its own family. The planner picks these where they are predicted
// faster than fusec's kernels (transforms/MatmulPaths.cpp); --no-fuse runs
// every product on them.
//
//===----------------------------------------------------------------------===//
#include "compiler/families/Families.h"
#include "compiler/families/LibraryMatmul.h"
#include "compiler/schedule/LibraryEpilogue.h"
#include "compiler/schedule/StridedView.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace fusec {
namespace families {
namespace {

class Cublaslt final : public KernelFamilyDef {
public:
  explicit Cublaslt(KernelFamily path) : path(path) {}
  KernelFamily id() const override { return path; }
  GroupKind kind() const override { return GroupKind::Matmul; }
  bool isLibrary() const override { return true; }
  std::string reject(FusionOp, const FamilyTarget &) const override {
    return "matmul groups run as the planner chose (MatmulPaths.cpp)";
  }
  llvm::Expected<KernelSpec> emit(FusionOp, const FamilyTarget &) const override {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: a cuBLASLt group has no kernel to emit");
  }
  double seconds(const Cost &c, const DeviceProfile &p) const override {
    KernelRates r = path == KernelFamily::LibraryBatchedRows
                        ? KernelRates{p.libraryBandwidthFraction, p.tensorFlopsPerSec}
                        : libraryRates(c, p);
    if (path == KernelFamily::LibraryEpilogue)
      // Its epilogue reads C (a residual) after the products, as far as the
      // model knows, as fusec's portable GEMM does: charged alike.
      r.epilogueSeconds += afterProductsSeconds(c, p);
    if (path == KernelFamily::LibraryBatchedRows) {
      // On 8-256 matrices of 4 rows (grouped-query decode attention, K = 128
      // or 4097) it streams at 4-48% of the copy rate on the H100, and a
      // call takes at least ~10 us however small (docs/matmul.md, "Decode
      // attention"; docs/cost-model.md, "Predicted time").
      r.bandwidthFraction = 0.3;
      r.minSeconds = 10e-6;
    }
    return rooflineSeconds(c, p, r);
  }

private:
  KernelFamily path;
};

} // namespace

const KernelFamilyDef &cublaslt(KernelFamily path) {
  static const Cublaslt plain(KernelFamily::Library), epilogue(KernelFamily::LibraryEpilogue),
      batchedRows(KernelFamily::LibraryBatchedRows);
  return path == KernelFamily::LibraryEpilogue      ? epilogue
         : path == KernelFamily::LibraryBatchedRows ? batchedRows
                                                    : plain;
}

} // namespace families

namespace {

MatrixLayout toLayout(const MatrixLayoutView &v, int64_t batch) {
  MatrixLayout l;
  l.rows = v.rows;
  l.cols = v.cols;
  l.ld = v.ld;
  l.rowMajor = v.rowMajor;
  l.batch = v.batchStride == 0 ? 1 : batch;
  l.batchStride = v.batchStride;
  return l;
}

} // namespace

llvm::Expected<PlanMatmul> libraryMatmul(FusionOp f, ArrayRef<int> inputBuffers, int out) {
  MatmulOp mm;
  for (Operation &op : f.getBodyBlock())
    if (auto m = dyn_cast<MatmulOp>(op))
      mm = m;
  if (!mm)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: library matmul kernel %s holds no matmul",
                                   f->getAttrOfType<mlir::StringAttr>("name").str().c_str());
  std::vector<int64_t> batchShape = matmulBatchShape(mm);
  auto a = matmulOperandLayout(mm.getLhs(), batchShape, 'r');
  auto b = matmulOperandLayout(mm.getRhs(), batchShape, 'c');
  if (!a || !b)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: matmul operand is not a strided view");
  int64_t batch = 1;
  for (int64_t d : batchShape)
    batch *= d;
  PlanMatmul p;
  p.desc.dtype = dtypeOf(mm.getResult());
  p.desc.a = toLayout(*a, batch);
  p.desc.b = toLayout(*b, batch);
  p.desc.c.rows = a->rows;
  p.desc.c.cols = b->cols;
  p.desc.c.ld = b->cols;
  p.desc.c.batch = batch;
  p.desc.c.batchStride = a->rows * b->cols;
  p.desc.c.rowMajor = true;
  int64_t bytes = dtypeBytes(p.desc.dtype);
  p.a = inputBuffers[cast<BlockArgument>(viewSource(mm.getLhs())).getArgNumber()];
  p.b = inputBuffers[cast<BlockArgument>(viewSource(mm.getRhs())).getArgNumber()];
  p.aOffset = a->offset * bytes;
  p.bOffset = b->offset * bytes;
  p.c = out;
  if (f.getFamily() != KernelFamily::LibraryEpilogue)
    return p;
  auto e = f->getAttrOfType<LibraryEpilogueAttr>("library_epilogue");
  if (!e)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: cuBLASLt epilogue group %s has no "
                                   "library_epilogue (-fusec-select-kernels did not run)",
                                   f->getAttrOfType<StringAttr>("name").str().c_str());
  p.desc.alpha = static_cast<float>(e.getAlpha().getValueAsDouble());
  if (e.getResidual() >= 0) {
    p.desc.beta = 1;
    p.residual = inputBuffers[e.getResidual()];
    p.residualOffset = e.getResidualOffset() * bytes;
  }
  if (e.getBias() >= 0) {
    p.desc.biasEpilogue = true;
    p.bias = inputBuffers[e.getBias()];
    p.biasOffset = e.getBiasOffset() * bytes;
  }
  p.desc.geluEpilogue = e.getGelu();
  return p;
}

llvm::Expected<LibraryEpilogueAttr> libraryEpilogueOf(FusionOp f) {
  MatmulOp mm;
  std::vector<Operation *> epilogue;
  for (Operation &op : f.getBodyBlock().without_terminator()) {
    if (auto m = dyn_cast<MatmulOp>(op))
      mm = m;
    else
      epilogue.push_back(&op);
  }
  std::string why;
  std::optional<LibraryEpilogue> e = mm ? matchLibraryEpilogue(mm, epilogue, why) : std::nullopt;
  if (!e)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: the planner gave %s to cuBLASLt's epilogue, "
                                   "which does not express it: %s",
                                   f->getAttrOfType<StringAttr>("name").str().c_str(),
                                   why.c_str());
  // The residual and the bias as the group's inputs, and where in them.
  auto input = [](Value v, int64_t &offset) -> int64_t {
    if (!v)
      return -1;
    offset = stridedView(v)->offset;
    return cast<BlockArgument>(viewSource(v)).getArgNumber();
  };
  int64_t residualOffset = 0, biasOffset = 0;
  int64_t residual = input(e->residual, residualOffset), bias = input(e->bias, biasOffset);
  Builder b(f.getContext());
  return LibraryEpilogueAttr::get(f.getContext(), b.getF64FloatAttr(e->alpha), residual,
                                  residualOffset, bias, biasOffset, e->gelu);
}

} // namespace fusec
