//===- RowStatsForm.h - a product's row max and sum of exponentials -------===//
//
// The streaming-reduction rule without a second product: the row max m and
// the sum l of exp(x - m) over the last axis of a product's logits x (S =
// A B after elementwise ops of S's shape), where nothing else reads S or x,
// need neither in memory. A log-sum-exp over a vocabulary projection
// (cross-entropy's normalizer) is the case that matters: the logits are the
// largest tensor of a language model's step. Each output tile of the
// product reduces its rows to a partial (max, sum) pair in its epilogue;
// the last tile of each row tile merges the pairs (the online softmax's
// rescaling) and computes the ops the group keeps on the rows' values, such
// as log(l) + m. Sums over the same columns of an elementwise function of
// the logits, the column index and per-row values ("picks": the target's
// logit, sum over j of (j == t) x_j) ride along: each tile adds its columns'
// terms, the last one adds the tiles', so a cross-entropy reads neither.
//
// matchRowStats finds the group; the planner (transforms/FormAttention.cpp)
// forms it where the streamed kernel is predicted faster than the product
// followed by a row reduction; classifyGroup names it; the family is in
// families/StreamedRows.cpp, its kernel the GEMM's with a statistics
// epilogue (codegen/RowStatsEpilogue.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusec {

struct RowStatsMatch {
  MatmulOp product;  ///< S = A B: [batch..., M, N]
  MaxOp max;         ///< m = max(x) over N, kept as 1
  SumOp sum;         ///< l = sum(exp(x - m)) over N, kept as 1
  SubOp sub;
  ExpOp exp;
  mlir::Value logits;  ///< x: S after the elementwise ops between them
  /// Sums over N of elementwise functions of x, the column index and values
  /// that do not vary along N (a target's logit: sum(where(iota == t, x, 0))).
  std::vector<SumOp> picks;
  /// Every op of the group in program order: the product, the ops from S
  /// to x and the side ops they alone read, max, sub, exp, sum, and the
  /// tail: elementwise ops of the rows' shape on m, l and inputs.
  std::vector<mlir::Operation *> ops;
  std::vector<mlir::Operation *> tail;
  int64_t rows = 0, cols = 0, batch = 1;
};

/// The streamed row statistics whose sum of exponentials is `op`; nullopt
/// otherwise, with the reason in `why` where `op` is such a sum the kernel
/// declines (empty when it is none).
std::optional<RowStatsMatch> matchRowStats(mlir::Operation *op, std::string &why);

/// The GEMM kernel that streams a match on `arch`: the Hopper TMA + wgmma
/// kernel where it takes the product (K-contiguous operands from memory,
/// more than 64 rows, one matrix), else the portable mma.sync kernel.
KernelFamily rowStatsPath(const RowStatsMatch &m, const std::string &arch);

/// The streamed row statistics among `ops`: the first sum's match whose ops
/// are all in `ops` (a candidate group may hold more).
std::optional<RowStatsMatch> rowStatsAmong(llvm::ArrayRef<mlir::Operation *> ops);
/// The streamed row statistics whose ops are exactly `ops` (a group).
std::optional<RowStatsMatch> rowStatsGroup(llvm::ArrayRef<mlir::Operation *> ops);
/// The streamed row statistics a fused group's body computes; `why` gets a
/// declined match's reason.
std::optional<RowStatsMatch> rowStatsOf(FusionOp fusion, std::string *why = nullptr);

} // namespace fusec
