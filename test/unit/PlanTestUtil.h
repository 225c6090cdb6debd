//===- PlanTestUtil.h - planning a graph and compiling its kernels --------===//
#pragma once

#include "compiler/pipeline/Compile.h"
#include "compiler/support/HostTensor.h"
#include "compiler/plan/PlanDesc.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace fusec::testing {

/// Whether NVRTC loads here (kernel compile checks need it; a build machine
/// without the CUDA toolkit's NVRTC skips them).
bool nvrtcLoads();
/// Compiles every kernel of a plan with NVRTC for the plan's architecture.
void expectKernelsCompile(const std::string &name, const PlanDesc &plan);

/// The graph files (*.json) in the given directories, sorted.
std::vector<std::string> graphFiles(std::initializer_list<const char *> dirs);

/// Random values for each argument of `f`, argument i seeded with seed + i.
std::vector<HostTensor> randomInputs(mlir::func::FuncOp f, uint64_t seed);

/// Interprets a graph before and after fusion on the same random inputs and
/// expects the same results; `keep` receives the fused module.
void expectSameResults(const std::string &text, uint64_t seed, bool fuse,
                       mlir::OwningOpRef<mlir::ModuleOp> *keep = nullptr,
                       mlir::MLIRContext *context = nullptr, const char *gemm = "auto",
                       bool decomposedReference = false);

/// Plans a graph for `arch`: code generation differs by target (clusters on sm_90).
llvm::Expected<PlanDesc> planFor(mlir::MLIRContext &ctx, llvm::StringRef text,
                                 llvm::StringRef name, bool fuse, const char *arch,
                                 const char *gemm = "auto", int gemmCandidate = -1);

} // namespace fusec::testing
