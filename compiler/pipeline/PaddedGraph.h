//===- PaddedGraph.h - one compile for every size up to a bound ------------===//
//
// The padded graph (compiler/plan/PlanPadding.h says how its sizes are
// chosen and how calls pass and get tensors): it takes each size as an
// argument and is exact at every size up to the padded one
// (-fusec-pad-sizes); the caller pads the inputs with zeros and drops the
// padding from the outputs (padInputs, cropOutputs; the runtime does the
// same on the GPU).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/interp/Interpreter.h"
#include "compiler/plan/PlanPadding.h"
#include "compiler/support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fusec {

/// Reads a graph with its named dims bound to `sizes`.
using GraphRead = std::function<llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>(const SizeMap &)>;

/// The graph read at `sizes` and made exact for every size up to them of
/// the names in `bounds` (each read at `sizes`' size of it, which should be
/// a padded size, and once more at another size to find its dims). A name
/// read at size 1 is not padded. Errors name the node that cannot be padded.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> readPadded(const GraphRead &read,
                                                              const SizeMap &sizes,
                                                              const SizeMap &bounds);

/// The signature of padded graph `graph`.
PaddedSignature paddedSignature(mlir::func::FuncOp graph);

/// The reference interpreter on padded graph `graph` for a call at `sizes`:
/// padInputs, interpret, cropOutputs.
llvm::Expected<std::vector<HostTensor>> interpretPadded(mlir::func::FuncOp graph,
                                                        const std::vector<HostTensor> &inputs,
                                                        const SizeMap &sizes,
                                                        const InterpOptions &options = {});

} // namespace fusec
