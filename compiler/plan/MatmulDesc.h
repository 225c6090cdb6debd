//===- MatmulDesc.h - a matmul as cuBLASLt is asked for it, as data -------===//
//
// The plan describes a library matmul by its operands' layouts as they lie in
// memory; the runtime (runtime/CublasLt.h) turns the description into a
// cuBLASLt call. Plain data: no CUDA headers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/DType.h"

#include <cstdint>

namespace fusec {

/// One matrix operand as it lies in memory.
struct MatrixLayout {
  int64_t rows = 0, cols = 0;
  /// Elements between consecutive rows (row-major) or columns (column-major).
  int64_t ld = 0;
  /// Either the batch count of the whole matmul, or 1 for an operand shared by
  /// every batch (its batchStride is then ignored and treated as 0).
  int64_t batch = 1;
  /// Elements between consecutive matrices of the batch; 0 broadcasts.
  int64_t batchStride = 0;
  bool rowMajor = true;
};

/// C[i] = epilogue(alpha * op(A[i]) @ op(B[i]) + beta * C[i]) for each batch i,
/// accumulated in fp32 (CUBLAS_COMPUTE_32F: no TF32 for f32 inputs, so f32
/// results match an fp32 reference). A, B and C share `dtype`.
struct MatmulDesc {
  DType dtype = DType::F32; ///< F32, F16 or BF16.
  MatrixLayout a, b, c;
  bool transA = false, transB = false;
  float alpha = 1, beta = 0;
  /// Adds a bias vector of N elements (one per output column, dtype `dtype`,
  /// shared by every batch). Needs a row-major C.
  bool biasEpilogue = false;
  /// Applies GELU (cuBLASLt's tanh approximation) after the bias.
  bool geluEpilogue = false;
};

} // namespace fusec
