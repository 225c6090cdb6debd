//===- LibraryEpilogue.h - epilogues cuBLASLt applies itself --------------===//
//
// cuBLASLt computes D = epilogue(alpha * A @ B + beta * C) with the bias add
// and GELU (tanh form) as optional epilogues. A matmul group whose pointwise
// ops say exactly that -- a scale by a constant, a residual add, a bias add
// along the rows, then gelu(tanh) last -- runs as one library call instead of
// the library product plus a kernel for the rest. The fusion pass matches a
// group here to choose; -fusec-select-kernels matches the outlined group to
// record the call (#fusec.library_epilogue), which plan building reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>

namespace fusec {

struct LibraryEpilogue {
  double alpha = 1;         ///< the product's scale
  mlir::Value residual;     ///< C, added with beta = 1 (null: beta = 0)
  mlir::Value bias;         ///< the vector added to every row (null: none)
  bool gelu = false;        ///< gelu(tanh) applied last
  mlir::Value result;       ///< the group's one output
  /// "alpha, residual, bias, gelu": what the library does besides the product.
  std::string describe() const;
};

/// Matches `epilogue` (the group's ops besides `matmul`, views and constants
/// included) against cuBLASLt's epilogue. nullopt with `why` when the group
/// asks for something else (another op, a different order, an intermediate
/// used outside, mixed dtypes, a bias or residual it cannot read in place).
std::optional<LibraryEpilogue> matchLibraryEpilogue(mlir::Operation *matmul,
                                                    llvm::ArrayRef<mlir::Operation *> epilogue,
                                                    std::string &why);

} // namespace fusec
