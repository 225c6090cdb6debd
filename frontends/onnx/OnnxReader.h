//===- OnnxReader.h - ONNX models -> fusec's graph format -----------------===//
//
// An ONNX model (ModelProto, as torch.onnx.export writes it) becomes a graph
// in fusec's JSON format (docs/graph-format.md), which the JSON reader then
// checks and imports: one set of shape and dtype rules, one set of error
// messages. Graph inputs keep their ONNX names. Initializers of one element
// become constants; larger ones (weights) are parameters of their own names,
// whose values onnxFileWeights reads (also from external data files). An
// operator, attribute or input form not covered is an error naming the
// node, the op type and the opset.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/HostTensor.h"
#include "frontends/json/GraphReader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <set>
#include <string>

namespace fusec {

/// The model in `bytes` (the contents of `fileName`) as a graph in fusec's
/// JSON format: what `fusec import` writes.
llvm::Expected<std::string> onnxToGraphJson(llvm::StringRef bytes, llvm::StringRef fileName,
                                            const SizeBindings &sizes = {});

/// The same for the model file at `path`.
llvm::Expected<std::string> onnxFileToGraphJson(llvm::StringRef path,
                                                const SizeBindings &sizes = {});

/// The values of the model's initializers named `names` (the converted
/// graph's parameters), by name: from the model file, or the external data
/// files it names (paths inside the model's folder).
llvm::Expected<std::map<std::string, HostTensor>>
onnxFileWeights(llvm::StringRef path, const std::set<std::string> &names);

/// The named dims of a graph file of either format (an ONNX model's dynamic
/// axes), by input name (NamedDims).
llvm::Expected<NamedDims> namedDimsOfModelFile(llvm::StringRef path);

/// Reads a graph file of either format: ONNX where the name ends in .onnx,
/// else fusec's JSON; named (dynamic) dims take the sizes `sizes` binds.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> importModelFile(llvm::StringRef path,
                                                                  mlir::MLIRContext &ctx,
                                                                  const SizeBindings &sizes = {});

} // namespace fusec
