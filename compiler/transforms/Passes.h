//===- Passes.h - fusec passes and pipelines ------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace fusec {

#define GEN_PASS_DECL
#include "compiler/transforms/Passes.h.inc"

/// Registers every fusec pass and the fusec pipelines with the global registry.
void registerPassesAndPipelines();

/// decompose, canonicalize, CSE: what `fusec compile --emit decomposed` prints.
void buildDecomposePipeline(mlir::OpPassManager &pm);

struct FusionPipelineOptions : public mlir::PassPipelineOptions<FusionPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("fuse (false: one kernel per op)"),
                    llvm::cl::init(true)};
  Option<std::string> device{*this, "device", llvm::cl::desc("device profile"),
                             llvm::cl::init("h100")};
  Option<double> copyBytesPerSec{*this, "copy-bytes-per-sec",
                                 llvm::cl::desc("measured copy bandwidth (0: the profile's)"),
                                 llvm::cl::init(0.0)};
  Option<int> smCount{*this, "sm-count", llvm::cl::desc("SMs of the GPU (0: the profile's)"),
                      llvm::cl::init(0)};
  Option<std::string> arch{*this, "arch", llvm::cl::desc("NVRTC target (empty: the profile's)"),
                           llvm::cl::init("")};
  Option<std::string> gemm{*this, "gemm", llvm::cl::desc("auto, fusec or cublaslt"),
                           llvm::cl::init("auto")};
};

/// The decompose pipeline, then vertical fusion (or one group per op).
void buildFusionPipeline(mlir::OpPassManager &pm, const FusionPipelineOptions &options);

} // namespace fusec
