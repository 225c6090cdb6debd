//===- SizeDims.h - which dims of a graph's values are a named size -------===//
//
// A graph compiled once for every size of a named dim ("shape": ["S", 4096])
// is compiled at a padded size P and run at any size up to it. The padding
// pass (-fusec-pad-sizes) must know which dims of every value are that size.
// Both frontends bind names to numbers as they read, so the dims are found by
// reading the graph at two sizes and comparing the modules op by op: a dim
// that is P in one and the probe size in the other is the name; any other
// difference (a dim S + 1 or 2S, an attribute computed from S) makes the
// graph one that cannot be padded, and says where.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace fusec {

/// On every op (per result) and argument of a graph function: an array of
/// strings, one a dim, the named size it is ("" for a fixed dim; "S+k" for a
/// dim of S positions followed by k fixed ones, splitMark).
inline constexpr llvm::StringLiteral kSizeDimsAttr = "fusec.size_dims";
/// The function attribute of a graph whose dims are marked: each name's
/// padded size (the size the graph was read at).
inline constexpr llvm::StringLiteral kPaddedSizesAttr = "fusec.padded_sizes";
/// The argument attribute of a size argument the padding pass adds: the
/// name whose size the call passes in it (an i32 scalar).
inline constexpr llvm::StringLiteral kSizeArgAttr = "fusec.size_of";

/// Marks the dims of `graph` (read with `name` = `size`) that are `name`,
/// by comparing it with `probe` (the same graph read with `name` =
/// `probeSize`, every other binding equal). A dim that merges the size with
/// fixed dims (c * size) is marked too. Keeps marks of other names.
/// Fails, naming the node and what differs, where the two differ in more
/// than those dims.
llvm::Error markSizeDims(mlir::func::FuncOp graph, mlir::func::FuncOp probe, llvm::StringRef name,
                         int64_t size, int64_t probeSize);

/// The marks of `v` (an argument or op result), one a dim ("" where fixed,
/// all "" where unmarked).
llvm::SmallVector<llvm::StringRef> sizeDimsOf(mlir::Value v);

/// "node 'q_proj' (matmul)": the graph node an op came from (escaped) and
/// the op, as the padding's errors name it.
std::string paddingNodeLabel(mlir::Operation *op);

/// A mark's name and the fixed positions that follow the size ("S+1": S, 1).
std::pair<llvm::StringRef, int64_t> splitMark(llvm::StringRef mark);

} // namespace fusec
