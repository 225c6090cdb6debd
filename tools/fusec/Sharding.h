//===- Sharding.h - the CLI's options that split a graph over ranks -------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace fusec::cli {

/// --ranks N and --shard NAME=DIM (repeat it or separate with commas).
void addSplitOptions(CLI::App *cmd, int &ranks, std::vector<std::string> &shard);

/// Marks each argument of `func` that an entry NAME=DIM of `shard` names as
/// split along DIM (negative counts from the end) over the ranks, and each
/// output so named as staying split (each rank returning its block, where
/// the split program computes it so). NAME may
/// be a glob (`*`, `?`, `[...]`: `*.q_proj.weight=0`); a later entry for the
/// same argument wins, as over a graph's own `shard` field. An entry naming
/// no argument, a DIM out of range, or an entry not of the form NAME=DIM is
/// an error that quotes it.
llvm::Error applyShards(mlir::func::FuncOp func, const std::vector<std::string> &shard);

} // namespace fusec::cli
