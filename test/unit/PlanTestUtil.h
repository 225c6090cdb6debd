//===- PlanTestUtil.h - planning a graph and compiling its kernels --------===//
#pragma once

#include "compiler/pipeline/Compile.h"
#include "runtime/PlanDesc.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace fusec::testing {

/// Compiles every kernel of a plan with NVRTC for the plan's architecture.
void expectKernelsCompile(const std::string &name, const PlanDesc &plan);

/// The graph files (*.json) in the given directories, sorted.
std::vector<std::string> graphFiles(std::initializer_list<const char *> dirs);

/// Plans a graph for `arch`: code generation differs by target (clusters on sm_90).
llvm::Expected<PlanDesc> planFor(mlir::MLIRContext &ctx, llvm::StringRef text,
                                 llvm::StringRef name, bool fuse, const char *arch,
                                 const char *gemm = "auto", int gemmCandidate = -1);

} // namespace fusec::testing
