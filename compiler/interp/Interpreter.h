//===- Interpreter.h - the CPU reference interpreter ----------------------===//
//
// Evaluates fusec IR on the host, op by op, as docs/graph-format.md defines
// each op: float ops compute in fp32 (fp64 on request) and round every result
// to its dtype once; reductions accumulate in double; composites are computed
// from their own formulas, not from their decompositions. Every pass can thus
// be checked for semantic preservation on random inputs without a GPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace fusec {

class RankLink;

struct InterpOptions {
  /// Compute float ops in double instead of float (results still round to
  /// their dtype on store).
  bool fp64 = false;
  /// This rank's link to the others when the program is split over ranks
  /// (interpretRanks sets it); collectives are an error without one.
  RankLink *link = nullptr;
};

/// This machine's physical memory in bytes, 0 when unknown.
double hostMemoryBytes();

/// An error naming the largest tensor of `func` (an argument or an op's
/// result, regions included) when holding it, at 8 bytes an element (the
/// interpreter's double temporaries), would take more than half of this
/// machine's memory: the allocation would otherwise abort the process. The
/// same for the graph as a whole: its arguments and the most of its values
/// alive at once, freed as the interpreter frees them. With `copies`, for
/// that many evaluations at once (the ranks of a split program).
llvm::Error checkInterpreterFits(mlir::func::FuncOp func, int copies = 1);

/// Evaluates `func` with one HostTensor per argument. An argument whose dtype
/// or shape differs from the function's signature is an error naming it.
llvm::Expected<std::vector<HostTensor>> interpret(mlir::func::FuncOp func,
                                                  llvm::ArrayRef<HostTensor> args,
                                                  const InterpOptions &opts = {});

/// Evaluates a block whose arguments are bound to `args`; the operands of its
/// terminator (any op with the ReturnLike trait, e.g. func.return) are the
/// results. Region ops such as fusec.fusion evaluate their bodies with it.
llvm::Expected<std::vector<HostTensor>> interpretBlock(mlir::Block &block,
                                                       llvm::ArrayRef<HostTensor> args,
                                                       const InterpOptions &opts);

} // namespace fusec
