//===- RowScaledOperand.h - a normalized A in the dot-product kernel ------===//
//
// An RMS norm before a decode projection is x * s * g with s = rsqrt(mean(x
// * x) + eps), one value per row of x: A's row m is scaled by s[m], so the
// product's row m is too, and
//
//   sum_k (P[m, k] * s[m]) W[k, n] = s[m] * sum_k P[m, k] W[k, n],   P = x * g.
//
// The dot-product kernel (1-8 rows of A) reads A's whole row per warp, so
// it accumulates the row's reductions (sum of x * x) in the same K loop as
// the products of P, and scales each sum by s[m] before the epilogue: the
// norm needs no kernel of its own and nothing waits for its statistic.
//
// rowScaledOperand finds that form in a matmul's prologue: A is a product
// (mul ops, through casts between float types) of factors, one of which is
// constant along K and holds every reduction of the prologue; each
// reduction reduces an [M, K] value over K and needs no other reduction
// (one pass). The planner takes such a prologue only for the dot-product
// kernel (GroupSchedule.cpp); codegen/RowScaledA.cpp writes it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace fusec {

struct RowScaledOperand {
  /// s: the factor of A constant along K, its shape [M, 1] or broadcast to it.
  mlir::Value scale;
  /// The reductions s is computed from, in `prologue` order, each over K of
  /// an [M, K] value.
  llvm::SmallVector<mlir::Operation *> reductions;
};

/// The row-scaled form of `matmul`'s A, computed by `prologue` (its
/// prologue ops, as matmulPrologue gives them). nullopt where the prologue
/// holds no reduction (empty `why`) or does not take the form (why not).
std::optional<RowScaledOperand> rowScaledOperand(mlir::Operation *matmul,
                                                 llvm::ArrayRef<mlir::Operation *> prologue,
                                                 std::string &why);

} // namespace fusec
