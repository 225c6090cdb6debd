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

namespace fusec {

/// Reads and checks `path`. The module's single function is named after the graph.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importGraphFile(llvm::StringRef path, mlir::MLIRContext &ctx);

/// Same, from text; `fileName` is used in messages and locations.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importGraphText(llvm::StringRef text, llvm::StringRef fileName, mlir::MLIRContext &ctx);

/// The graph's function (the first func.func of a module built by the reader).
mlir::func::FuncOp graphFunction(mlir::ModuleOp module);

} // namespace fusec
