//===- StridedView.h - views as (shape, strides, offset) over a buffer ----===//
//
// A chain of views (transpose, broadcast_to, slice, and reshape where the data
// allows it) over a contiguous buffer is a strided view. Libraries that take
// strided operands (cuBLASLt) can read such a chain in place; anything else is
// materialized first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace fusec {

struct StridedView {
  std::vector<int64_t> shape, strides;  ///< in elements
  int64_t offset = 0;                   ///< in elements
};

/// The view of `v` over the contiguous buffer behind it (viewSource(v)), or
/// nullopt when a reshape on the way cannot be expressed with strides.
std::optional<StridedView> stridedView(mlir::Value v);

/// Reshape of a strided view without copying, if possible.
std::optional<StridedView> reshapeView(const StridedView &view,
                                       const std::vector<int64_t> &newShape);

/// A batch of matrices: element (b, i, j) at offset + b*batchStride +
/// i*rowStride + j*colStride.
struct MatrixView {
  int64_t batch = 1, batchStride = 0, rows = 1, cols = 1, rowStride = 0, colStride = 0;
  int64_t offset = 0;
};

/// Reads `view` (rank >= 2, or 1 with `vectorAs` = 'r' row / 'c' column) as
/// matrices whose batch dims broadcast to `batchShape`, if those batch dims
/// collapse to a single stride.
std::optional<MatrixView> asBatchedMatrix(const StridedView &view,
                                          const std::vector<int64_t> &batchShape,
                                          char vectorAs = 0);

/// The batch dims of a matmul's result (NumPy semantics: a 1-D operand adds no
/// matrix dim to the result).
std::vector<int64_t> matmulBatchShape(mlir::Operation *matmul);

/// How a library sees one matmul operand: rows x cols with a leading dimension,
/// row- or column-major, batched with one stride.
struct MatrixLayoutView {
  int64_t rows = 1, cols = 1, ld = 1, batch = 1, batchStride = 0, offset = 0;
  bool rowMajor = true;
};

/// The layout of matmul operand `v` (lhs: vectorAs 'r', rhs: 'c') for a result
/// with batch dims `batchShape`, or nullopt when a library cannot read it in
/// place (no unit stride in the matrix, batch dims that do not collapse, or an
/// offset that is not 16-byte aligned).
std::optional<MatrixLayoutView> matmulOperandLayout(mlir::Value v,
                                                    const std::vector<int64_t> &batchShape,
                                                    char vectorAs);

/// The layout a kernel reads operand `v` in: matmulOperandLayout's where a
/// view reads it in place, else that of the contiguous copy outlining makes
/// of it first (FusionOutlining.cpp, materializeMatmulOperands). What the
/// planner judges a kernel's operands by, as code generation will see them.
MatrixLayoutView matmulOperandLayoutAsRead(mlir::Value v, const std::vector<int64_t> &batchShape,
                                           char vectorAs);

/// Whether 16-byte copies of this 16-bit operand are aligned: rows (along
/// the unit stride), leading dimension, offset and batch stride all multiples
/// of 8 elements.
bool alignedFor16ByteCopies(const MatrixLayoutView &l);

/// Whether sm_90a's TMA + wgmma GEMM (codegen/WgmmaGemm.cpp) takes this
/// matmul on `arch`: one matrix of more than 64 rows, 16-bit operands, both
/// K-contiguous with 16-byte aligned rows (x @ w^T, a linear layer).
bool wgmmaApplies(mlir::Operation *matmul, const std::string &arch);

/// Whether two sibling matmuls (one A, two weights of the same shape) can
/// share sm_90a's wgmma GEMM as one dual product: each tile multiplies its A
/// tile by both B tiles (SwiGLU's gate and up), and the epilogue joins the
/// two results: two products concatWgmmaApplies takes, whose weights have
/// one shape.
bool dualWgmmaApplies(mlir::Operation *first, mlir::Operation *second, const std::string &arch);

/// Sibling matmuls of one A on sm_90a's wgmma GEMM as one kernel over their
/// tiles side by side along N (Q/K/V projections): at most kMaxConcatProducts
/// 2-D products of one M and K, each K-contiguous and taken by the wgmma
/// kernel alone, 16-bit results of one dtype with 16-byte rows. Each tile
/// belongs to one product and goes out through its own tensor map.
constexpr size_t kMaxConcatProducts = 3;
bool concatWgmmaApplies(llvm::ArrayRef<mlir::Operation *> mms, const std::string &arch);

/// Whether fusec's dot-product kernel takes this matmul: 16-bit operands,
/// both K-contiguous with 16-byte aligned rows; 1-8 rows of A batched or not
/// (decode attention scores: a batch of heads, K rows of the cache), on CUDA
/// cores; 9-64 rows of one matrix on tensor cores (TensorCoreGemv.cpp).
bool gemvApplies(mlir::Operation *matmul);
/// Whether it takes it in the tensor-core form: 9-64 rows of one matrix.
bool tensorCoreGemvApplies(mlir::Operation *matmul);
/// Weight rows per cluster of the Hopper dot-product kernel (WgmmaGemv.cpp)
/// for `matmul` on `arch` with `smCount` SMs: 9-64 rows of A, K >= 128, one
/// cluster of two blocks per SM pair; 0 where it does not apply (not sm_90a,
/// or fewer than 32 or more than 128 weight rows a cluster).
int64_t wgmmaGemvRows(mlir::Operation *matmul, const std::string &arch, int smCount);
/// The same kernel over sibling matmuls of one A side by side (decode's Q, K
/// and V as three weights): 2 to kMaxConcatProducts 2-D products that each
/// take the form (9-64 rows, K >= 128), 16-bit results of one dtype. The
/// weight rows a cluster: the fewest (a multiple of 8, 32-128) that divide
/// every product's N with at most `smCount` clusters (two blocks an SM), so
/// a cluster's rows lie in one product; 0 where none does.
int64_t wgmmaGemvPartsRows(llvm::ArrayRef<mlir::Operation *> mms, const std::string &arch,
                           int smCount);

} // namespace fusec
