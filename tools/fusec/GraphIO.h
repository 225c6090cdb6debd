//===- GraphIO.h - graph inputs and outputs as host tensors ---------------===//
#pragma once

#include "compiler/support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fusec::cli {

/// The graph names of the function's arguments and results (`fusec.name` attrs).
std::vector<std::string> inputNames(mlir::func::FuncOp func);
std::vector<std::string> outputNames(mlir::func::FuncOp func);

/// One tensor per argument: read from `inputsPath` (a safetensors file, matched
/// by name, dtype and shape checked) or, if it is empty, drawn at random from
/// `seed`. Tensors in the file that the graph does not use are reported as notes.
llvm::Expected<std::vector<HostTensor>> prepareInputs(mlir::func::FuncOp func,
                                                      const std::string &inputsPath,
                                                      uint64_t seed);

/// Writes results by output name to a safetensors file.
llvm::Error writeOutputs(mlir::func::FuncOp func, const std::vector<HostTensor> &results,
                         const std::string &path);

} // namespace fusec::cli
