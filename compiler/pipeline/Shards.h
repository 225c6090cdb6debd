//===- Shards.h - NAME=DIM entries that split a graph's arguments ---------===//
//
// How a graph is split over ranks besides its own `shard` fields: the CLI's
// --shard and the API's Options::shards, one rule for both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace fusec {

/// Marks each argument of `func` that an entry NAME=DIM of `shard` names as
/// split along DIM (negative counts from the end) over the ranks, and each
/// output so named as staying split (each rank returning its block, where
/// the split program computes it so). NAME may be a glob (`*`, `?`, `[...]`:
/// `*.q_proj.weight=0`); a later entry for the same argument wins, as over a
/// graph's own `shard` field. An entry naming no argument, a DIM out of
/// range, or an entry not of the form NAME=DIM is an error that quotes it
/// after `what` (the option it came from: "--shard").
llvm::Error applyShards(mlir::func::FuncOp func, const std::vector<std::string> &shard,
                        llvm::StringRef what);

} // namespace fusec
