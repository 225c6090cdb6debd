//===- GraphReader.h - JSON op-graph (format v1) -> fusec dialect ---------===//
//
// Reads a graph file (docs/graph-format.md) into a module holding one
// func.func. Every problem is reported as one llvm::Error whose message names
// the file, the node (name and index) and the field, in graph terms.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <vector>

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace fusec {

/// Sizes given to the named dims of a graph (`"shape": ["B", "S", 4096]`, an
/// ONNX model's dynamic axes): `--bind B=1,S=1000`.
using SizeBindings = std::map<std::string, int64_t>;

/// Reads and checks `path`, its named dims bound by `sizes`. The module's
/// single function is named after the graph.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importGraphFile(llvm::StringRef path, mlir::MLIRContext &ctx, const SizeBindings &sizes = {});

/// Same, from text; `fileName` is used in messages and locations.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importGraphText(llvm::StringRef text, llvm::StringRef fileName, mlir::MLIRContext &ctx,
                const SizeBindings &sizes = {});

/// The named dims of a graph file's inputs and parameters, by tensor name:
/// per dim its size's name, or "" for a number (entries without a name are
/// left out).
using NamedDims = std::map<std::string, std::vector<std::string>>;
llvm::Expected<NamedDims> namedDimsOfGraphText(llvm::StringRef text, llvm::StringRef fileName);

/// "" when every name `sizes` binds is among `named` (the graph's named
/// dims), else the error for the first that is not: a size given for a dim
/// the graph does not have is a mistake (a typo), not something to ignore.
std::string unknownSizeError(const SizeBindings &sizes, const std::set<std::string> &named);

/// Why `name` cannot name a size, or "": `--bind NAME=N` must be able to
/// give it, so it is not empty, holds no ',', '=' or control character, and
/// neither starts nor ends with a space.
std::string sizeNameProblem(const std::string &name);

/// Parses "NAME=N" bindings (several separated by commas, or one per entry);
/// errors name `flag`, the option they came from.
llvm::Expected<SizeBindings> parseSizeBindings(const std::vector<std::string> &texts,
                                               llvm::StringRef flag = "--bind");

/// The graph's function (the first func.func of a module built by the reader).
mlir::func::FuncOp graphFunction(mlir::ModuleOp module);

/// Whether argument `i` of a graph's function is a parameter (bound from
/// weights files), not an input.
bool isParameter(mlir::func::FuncOp func, unsigned i);

} // namespace fusec
