//===- GraphIO.h - graph inputs and outputs as host tensors ---------------===//
#pragma once

#include "compiler/support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fusec::cli {

/// The graph names of the function's arguments and results (`fusec.name` attrs).
std::vector<std::string> inputNames(mlir::func::FuncOp func);
std::vector<std::string> outputNames(mlir::func::FuncOp func);
/// The names of its parameters (the arguments bound from weights files).
std::set<std::string> parameterNames(mlir::func::FuncOp func);

/// Where the values of a graph's arguments come from.
struct TensorSources {
  std::string inputs;                ///< safetensors file of graph inputs ("": random)
  std::vector<std::string> weights;  ///< safetensors files of its parameters (shards)
  std::string model;                 ///< an ONNX model whose own weights bind the parameters
};

/// What prepareInputs needs of one graph argument.
struct GraphArgument {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  bool parameter = false;  ///< bound from weights files
  double scale = 1;        ///< of random values (Program::randomInputs)
};
std::vector<GraphArgument> graphArguments(mlir::func::FuncOp func);

/// One tensor per argument, matched by name with dtype and shape checked.
/// Graph inputs come from `inputs` (tensors there that the graph does not use
/// are notes), or at random from `seed`. Parameters come from `weights`, where
/// a missing, extra or mismatched tensor is an error; else from the ONNX
/// model; else from `inputs`; else at random (with a note).
llvm::Expected<std::vector<HostTensor>> prepareInputs(const std::vector<GraphArgument> &args,
                                                      const TensorSources &sources,
                                                      uint64_t seed);
llvm::Expected<std::vector<HostTensor>> prepareInputs(mlir::func::FuncOp func,
                                                      const TensorSources &sources,
                                                      uint64_t seed);

/// Compares each result with the tensor of its output's name in the
/// safetensors file `path` (a stored reference), within `tolerance`
/// (negative: the dtype's, normwise relative), printing one line each; false
/// when any differs. A missing tensor, or one of another dtype or shape, is
/// an error.
llvm::Expected<bool> checkExpected(mlir::func::FuncOp func, const std::vector<HostTensor> &results,
                                   const std::string &path, double tolerance);
/// The same for outputs of these names.
llvm::Expected<bool> checkExpected(const std::vector<std::string> &names,
                                   const std::vector<HostTensor> &results,
                                   const std::string &path, double tolerance);

/// Writes results by output name to a safetensors file.
llvm::Error writeOutputs(mlir::func::FuncOp func, const std::vector<HostTensor> &results,
                         const std::string &path);
llvm::Error writeOutputs(const std::vector<std::string> &names,
                         const std::vector<HostTensor> &results, const std::string &path);

} // namespace fusec::cli
