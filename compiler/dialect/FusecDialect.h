//===- FusecDialect.h - the fusec dialect and its ops ---------------------===//
#pragma once

#include "compiler/dialect/FusecTraits.h"
#include "compiler/support/DType.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/dialect/FusecDialect.h.inc"
#include "compiler/dialect/FusecEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "compiler/dialect/FusecAttrs.h.inc"

#define GET_OP_CLASSES
#include "compiler/dialect/FusecOps.h.inc"

namespace fusec {

/// The MLIR element type of a graph dtype (bool is i1).
mlir::Type toMlirType(DType t, mlir::MLIRContext *ctx);
/// The graph dtype of an MLIR element type, if it is one of the six.
std::optional<DType> toDType(mlir::Type elementType);
/// Shape and dtype of a tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
DType dtypeOf(mlir::Value v);

/// The largest k of fusec.topk: it decomposes into k rounds over the row
/// (a kernel or two each), so a k in the thousands would be a graph of
/// thousands of reductions; sampling heads take k <= 100 or so.
constexpr int64_t kMaxTopK = 256;

/// Whether `op` is a fusec op that maps elements one to one (ElementwiseMap trait).
inline bool isElementwise(mlir::Operation *op) {
  return op->hasTrait<OpTrait::ElementwiseMap>();
}
/// The most ranks a program is split over (fusec.all_reduce and the others).
constexpr int64_t kMaxRanks = 64;

/// Whether `op` is where the ranks of a split program meet (all_reduce,
/// all_gather, reduce_scatter).
inline bool isCollective(mlir::Operation *op) {
  return mlir::isa<AllReduceOp, AllGatherOp, ReduceScatterOp>(op);
}

/// The argument attribute of a sharded argument: the dim it is split along
/// (its `shard` in the graph format), set before -fusec-partition.
inline constexpr llvm::StringLiteral kShardAttr = "fusec.shard";
/// The function attribute of a program split over ranks: their count.
inline constexpr llvm::StringLiteral kRanksAttr = "fusec.ranks";

/// The dim argument `i` of `func` is split along, if it is sharded.
std::optional<int64_t> shardAxis(mlir::func::FuncOp func, unsigned i);
/// The dim result `i` of `func` stays split along (each rank returning its
/// block), if it does: asked for before -fusec-partition, kept by it only
/// where the value is split so.
std::optional<int64_t> resultShardAxis(mlir::func::FuncOp func, unsigned i);
/// The ranks `func` is split over (1 when it is whole).
int64_t programRanks(mlir::func::FuncOp func);

inline bool isComposite(mlir::Operation *op) {
  return op->hasTrait<OpTrait::Composite>();
}

} // namespace fusec

namespace fusec {
/// Shared verifiers named from ODS `extraClassDefinition`s.
mlir::LogicalResult verifyReduceOp(mlir::Operation *op);
mlir::LogicalResult verifyAxisOp(mlir::Operation *op, int64_t axis);
} // namespace fusec
