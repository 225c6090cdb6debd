//===- Ranks.h - the interpreter over a program split across ranks --------===//
//
// A program partitioned over N ranks (-fusec-partition) is one function that
// every rank runs on its own shards; its collectives are where the ranks
// exchange tensors. The reference runs the N ranks as N threads of this
// process, each an ordinary interpreter whose collectives go through a
// RankLink, so a split program can be checked against the unsplit graph on
// the CPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace fusec {

struct InterpOptions;

/// One rank's end of the exchange between the ranks of a split program.
/// Every rank calls exchange() at each collective, in the same order.
class RankLink {
public:
  virtual ~RankLink() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// Every rank's `mine`, in rank order, once all ranks have given theirs;
  /// an error when another rank failed before it gave its own.
  virtual llvm::Expected<std::vector<HostTensor>> exchange(const HostTensor &mine) = 0;
};

/// Each rank's arguments of `func`, a program split over ranks
/// (-fusec-partition): a sharded argument's block for the rank, every other
/// argument whole. `whole` holds the arguments as the unsplit graph takes them.
std::vector<std::vector<HostTensor>> argumentsPerRank(mlir::func::FuncOp func,
                                                      const std::vector<HostTensor> &whole);

/// Interprets `func` once per rank (args[r] are rank r's arguments), the
/// ranks running at once and meeting at the collectives. Returns each rank's
/// results; the first error of any rank (named by its rank) stops them all.
llvm::Expected<std::vector<std::vector<HostTensor>>>
interpretRanks(mlir::func::FuncOp func, const std::vector<std::vector<HostTensor>> &args,
               const InterpOptions &opts);

/// `func`, a program split over ranks, on the whole graph's arguments: its
/// memory checked for every rank at once, each rank given its blocks
/// (argumentsPerRank), the ranks interpreted, and the whole outputs
/// returned: an output left split (resultShardAxis) joined from the ranks'
/// blocks, every other as every rank returned it (an error where the ranks
/// disagree).
llvm::Expected<std::vector<HostTensor>> interpretSplit(mlir::func::FuncOp func,
                                                       const std::vector<HostTensor> &whole,
                                                       const InterpOptions &opts);

} // namespace fusec
