//===- ScalarOps.h - one C++ expression per elementwise op ----------------===//
//
// The renderer table: given an op and the C++ expressions of its operands (in
// compute types: float for every float dtype, int, long long, bool), the
// expression of its result. Kept as a short table of rules, one per op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/DType.h"

#include "mlir/IR/Operation.h"

#include <string>
#include <vector>

namespace fusec::codegen {

/// The compute type of a dtype: "float" for f32/f16/bf16, "int", "long long", "bool".
const char *computeType(DType t);
/// The storage type used in kernel signatures: float, fz_bf16, fz_f16, int, long long, fz_u8.
const char *storageType(DType t);

/// A literal of `value` converted to dtype `t` exactly as `cast` would (the
/// value is rounded to t on the host, then printed in t's compute type).
std::string literal(double value, DType t);

/// The expression of elementwise op `op` (not constant/iota/concat/views) applied
/// to `operands`. Returns "" if the op has no rule.
std::string scalarExpr(mlir::Operation *op, const std::vector<std::string> &operands);

/// Identity and combine expressions of a reduction op for accumulator type `acc`.
struct ReductionRule {
  std::string accType;   ///< "float" or "long long"
  std::string identity;  ///< initial accumulator
  std::string functor;   ///< fz_sum_op / fz_max_op / fz_min_op
  bool isMean = false;   ///< divide by the element count at the end
};
ReductionRule reductionRule(mlir::Operation *op);

} // namespace fusec::codegen
