//===- GemmForms.cpp - which of fusec's GEMM kernels runs a matmul group --===//
#include "compiler/schedule/GemmForms.h"

#include "compiler/dialect/FusecDialect.h"
#include "compiler/schedule/StridedView.h"

using namespace mlir;

namespace fusec {

namespace {
/// The rows of A when `matmul` is one matrix of 16-bit operands, both
/// K-contiguous with 16-byte aligned rows (x @ w^T): what fusec's Hopper GEMM
/// and its dot-product kernel read (the latter batched too, with `batched`);
/// nullopt otherwise.
std::optional<int64_t> kContiguousRows(mlir::Operation *matmul, bool batched) {
  auto mm = llvm::dyn_cast<MatmulOp>(matmul);
  if (!mm)
    return std::nullopt;
  DType dt = dtypeOf(mm.getLhs());
  if ((dt != DType::BF16 && dt != DType::F16) || dtypeOf(mm.getRhs()) != dt)
    return std::nullopt;
  std::vector<int64_t> batch = matmulBatchShape(mm);
  for (int64_t d : batch)
    if (d != 1 && !batched)
      return std::nullopt;
  MatrixLayoutView a = matmulOperandLayoutAsRead(mm.getLhs(), batch, 'r');
  MatrixLayoutView b = matmulOperandLayoutAsRead(mm.getRhs(), batch, 'c');
  if (!a.rowMajor || b.rowMajor || !alignedFor16ByteCopies(a) || !alignedFor16ByteCopies(b))
    return std::nullopt;
  return a.rows;
}
} // namespace

bool wgmmaApplies(mlir::Operation *matmul, const std::string &arch) {
  // M <= 64 (decode) streams weights: the skinny and dot-product kernels.
  // Fewer than 16 columns of B (a matrix-vector product) is no tile for it.
  std::optional<int64_t> rows = kContiguousRows(matmul, false);
  ArrayRef<int64_t> b = shapeOf(llvm::cast<MatmulOp>(matmul).getRhs());
  return arch == "sm_90a" && rows && *rows > 64 && b.size() >= 2 && b.back() >= 16;
}

/// Whether two matmuls read the same rows of A: one view (offset, strides)
/// of one tensor, not only tensors of one source and shape (two slices).
static bool sameRowsOfA(MatmulOp x, MatmulOp y) {
  if (viewSource(x.getLhs()) != viewSource(y.getLhs()))
    return false;
  auto a = matmulOperandLayout(x.getLhs(), {}, 'r'), b = matmulOperandLayout(y.getLhs(), {}, 'r');
  return a && b && a->rows == b->rows && a->cols == b->cols && a->ld == b->ld &&
         a->offset == b->offset && a->rowMajor == b->rowMajor;
}

bool dualWgmmaApplies(mlir::Operation *first, mlir::Operation *second, const std::string &arch) {
  // Two products side by side whose weights have one shape: one output tile
  // of each per A tile.
  mlir::Operation *pair[] = {first, second};
  return concatWgmmaApplies(pair, arch) &&
         shapeOf(llvm::cast<MatmulOp>(first).getRhs()) ==
             shapeOf(llvm::cast<MatmulOp>(second).getRhs());
}

/// What products side by side share with the first of them, on either
/// kernel: 2-D, 16-bit results of its dtype, A's dtype and the same rows of A.
static bool sideBySideWith(MatmulOp mm, MatmulOp first) {
  return shapeOf(mm.getResult()).size() == 2 && shapeOf(mm.getRhs()).size() == 2 &&
         isHalfFloat(dtypeOf(mm.getResult())) &&
         dtypeOf(mm.getResult()) == dtypeOf(first.getResult()) &&
         dtypeOf(mm.getLhs()) == dtypeOf(first.getLhs()) && sameRowsOfA(mm, first);
}

bool concatWgmmaApplies(llvm::ArrayRef<mlir::Operation *> mms, const std::string &arch) {
  if (mms.size() < 2 || mms.size() > kMaxConcatProducts)
    return false;
  auto first = llvm::cast<MatmulOp>(mms.front());
  ArrayRef<int64_t> r0 = shapeOf(first.getResult()), a0 = shapeOf(first.getLhs());
  for (mlir::Operation *op : mms) {
    auto mm = llvm::cast<MatmulOp>(op);
    ArrayRef<int64_t> r = shapeOf(mm.getResult());
    if (!wgmmaApplies(op, arch) || !sideBySideWith(mm, first) || r[0] != r0[0] ||
        shapeOf(mm.getLhs()) != a0 || r[1] % 8 != 0)
      return false;
  }
  return true;
}

bool tensorCoreGemvApplies(mlir::Operation *matmul) {
  std::optional<int64_t> rows = kContiguousRows(matmul, false);
  return rows && *rows > 8 && *rows <= 64;
}

int64_t wgmmaGemvRows(mlir::Operation *matmul, const std::string &arch, int smCount) {
  if (arch != "sm_90a" || smCount < 2 || !tensorCoreGemvApplies(matmul))
    return 0;
  ArrayRef<int64_t> b = shapeOf(llvm::cast<MatmulOp>(matmul).getRhs());
  if (b.size() < 2 || b[b.size() - 2] < 128)
    return 0;
  // The weight rows spread evenly over the clusters that fit one to an SM
  // pair, in multiples of 8 (wgmma's N). Fewer than 32 a cluster (N below
  // ~2100 on 132 SMs: decode's K and V) leave each block too little to
  // stream: K and V of 1024 rows this way with Q beside them are slower than
  // one tensor-core kernel of the three (docs/matmul.md, "How a group runs").
  int64_t clusters = smCount / 2, n = b.back();
  int64_t rows = ((n + clusters - 1) / clusters + 7) / 8 * 8;
  return rows >= 32 && rows <= 128 ? rows : 0;
}

int64_t wgmmaGemvPartsRows(llvm::ArrayRef<mlir::Operation *> mms, const std::string &arch,
                           int smCount) {
  if (arch != "sm_90a" || mms.size() < 2 || mms.size() > kMaxConcatProducts || smCount < 2)
    return 0;
  auto first = llvm::cast<MatmulOp>(mms.front());
  int64_t total = 0;
  std::vector<int64_t> ns;
  for (mlir::Operation *op : mms) {
    auto mm = llvm::cast<MatmulOp>(op);
    ArrayRef<int64_t> b = shapeOf(mm.getRhs());
    if (!tensorCoreGemvApplies(op) || !sideBySideWith(mm, first) || b[0] < 128)
      return 0;
    ns.push_back(b.back());
    total += b.back();
  }
  for (int64_t rows = 32; rows <= 128; rows += 8)
    if (total / rows <= smCount && llvm::all_of(ns, [&](int64_t n) { return n % rows == 0; }))
      return rows;
  return 0;
}

bool gemvApplies(mlir::Operation *matmul) {
  std::optional<int64_t> rows = kContiguousRows(matmul, true);
  return (rows && *rows <= 8) || tensorCoreGemvApplies(matmul);
}


namespace {
/// The path fusec's own kernel for `matmul` takes by its size (Fusec,
/// FusecGemv, FusecBatchedRows or FusecBatchedStream), before its operands'
/// layouts are asked.
GemmPath ownGemmPath(Operation *matmul) {
  MatmulDims d = matmulDims(matmul);
  if (d.rows <= 8 && d.batch == 1)
    return GemmPath::FusecGemv;
  // A batch of few-row products: short K (scores over the head dim) leaves
  // the portable GEMM's tiles mostly idle; long K (probabilities @ V) streams
  // like any split-K GEMM (FusecBatchedStream below; docs/cost-model.md,
  // "Predicted time").
  if (d.rows <= 8 && d.k <= 128)
    return GemmPath::FusecBatchedRows;
  // Only a batch of about a block an SM or more streams so (Llama decode on
  // the H100: 256 matrices at 88% of the copy rate; at one token, 8 matrices
  // of 4 x 4097 @ 4097 x 128 at 23%, which the portable GEMM's rate prices
  // nearer).
  if (d.rows <= 8 && d.batch >= 128)
    return GemmPath::FusecBatchedStream;
  return GemmPath::Fusec;
}

} // namespace

GemmPath gemvPath(Operation *matmul) {
  return matmulDims(matmul).rows > 8 ? GemmPath::FusecTensorGemv : GemmPath::FusecGemv;
}


FusecGemmPaths fusecGemmPaths(Operation *mm, bool hasPrologue, const std::string &arch,
                              const DeviceProfile &profile) {
  GemmPath path = ownGemmPath(mm);
  // Operands the dot-product kernel cannot read (not K-contiguous): the
  // portable GEMM runs the few rows.
  if (path == GemmPath::FusecGemv && !gemvApplies(mm))
    path = GemmPath::Fusec;
  if (path == GemmPath::Fusec && wgmmaApplies(mm, arch) && profile.wgmmaFlopsPerSec > 0)
    path = GemmPath::FusecWgmma;
  // K-contiguous operands: the dot-product kernel (a batch of few-row
  // products; 9-64 rows of one matrix on tensor cores).
  if ((path == GemmPath::FusecBatchedRows || path == GemmPath::FusecBatchedStream ||
       path == GemmPath::Fusec) &&
      gemvApplies(mm))
    path = tensorCoreGemvApplies(mm) ? GemmPath::FusecTensorGemv : GemmPath::FusecGemv;
  // On sm_90a its Hopper form.
  if (path == GemmPath::FusecTensorGemv && wgmmaGemvRows(mm, arch, profile.smCount) > 0)
    path = GemmPath::FusecWgmmaGemv;
  // A computed operand goes through the portable kernel's loads or the
  // 1-8 row dot-product kernel's; the wgmma kernels and the tensor-core
  // form load both operands from memory.
  bool loadsFromMemory = path == GemmPath::FusecWgmma || path == GemmPath::FusecTensorGemv ||
                         path == GemmPath::FusecWgmmaGemv;
  return {path, hasPrologue && loadsFromMemory ? GemmPath::Fusec : path};
}

SmallVector<Operation *> matmulsOf(ArrayRef<Operation *> group) {
  SmallVector<Operation *> mms;
  for (Operation *op : group)
    if (isa<MatmulOp>(op))
      mms.push_back(op);
  return mms;
}

bool onlyProducts(ArrayRef<Operation *> group) {
  return llvm::all_of(group, [](Operation *op) { return isa<MatmulOp>(op) || isView(op); });
}

bool isSideBySide(ArrayRef<Operation *> group) {
  SmallVector<Operation *> mms = matmulsOf(group);
  return mms.size() >= 2 && !llvm::all_of(mms, [](Operation *op) { return gemvApplies(op); }) &&
         onlyProducts(group);
}

GemmPath siblingGemvPath(ArrayRef<Operation *> group, const std::string &arch, int smCount) {
  SmallVector<Operation *> mms = matmulsOf(group);
  if (mms.empty())
    return GemmPath::FusecGemv;
  if (mms.size() >= 2 && onlyProducts(group) &&
      gemvPath(mms.front()) == GemmPath::FusecTensorGemv &&
      wgmmaGemvPartsRows(mms, arch, smCount) > 0)
    return GemmPath::FusecWgmmaGemv;
  return gemvPath(mms.front());
}

bool isDual(ArrayRef<Operation *> group) {
  SmallVector<Operation *> mms = matmulsOf(group);
  return mms.size() == 2 && !llvm::all_of(mms, [](Operation *op) { return gemvApplies(op); }) &&
         !isSideBySide(group);
}

} // namespace fusec
