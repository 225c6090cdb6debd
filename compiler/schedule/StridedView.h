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

/// How a library sees `view` of a tensor of `bytes`-byte elements as a
/// matmul operand (matmulOperandLayout's rule, for a view at hand).
std::optional<MatrixLayoutView> layoutOfView(const StridedView &view,
                                             const std::vector<int64_t> &batchShape,
                                             char vectorAs, int64_t bytes);

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

} // namespace fusec
