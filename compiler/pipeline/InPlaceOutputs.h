//===- InPlaceOutputs.h - graph outputs that are another result reshaped --===//
//
// A graph output that only reshapes another kernel's result (decode: the new
// K/V rows, [B, H*D] -> [B, H, 1, D]) would be a copy kernel of its own: the
// outlining makes a view that reaches the return into a copy group. Reshaping
// a contiguous tensor keeps every byte where it is, so the producing kernel
// writes the output buffer directly and the copy is not run; the kernel's
// other readers read that buffer. Shared by the plan and `fusec explain`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace fusec {

/// The copy groups not to run, each mapped to the value whose kernel writes
/// the graph output it would have written (that value's buffer is the output).
llvm::DenseMap<mlir::Operation *, mlir::Value> outputsWrittenInPlace(mlir::func::FuncOp func);

} // namespace fusec
