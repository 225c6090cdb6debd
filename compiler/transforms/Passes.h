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

/// decompose, canonicalize, CSE: what `fusec compile --emit decomposed` prints;
/// with ranks > 1, then the split over the ranks (-fusec-partition).
void buildDecomposePipeline(mlir::OpPassManager &pm, int ranks = 1);
/// The split over `ranks` by the sharded arguments (-fusec-partition), then
/// canonicalize and CSE.
void buildPartitionPipeline(mlir::OpPassManager &pm, int ranks);

/// What every planner pass takes (GroupingOptions in Passes.td): the device
/// the cost model prices for, the kernels' target, the GEMM choice.
struct PlannerSettings {
  std::string device = "h100";
  double copyBytesPerSec = 0;
  int smCount = 0;
  std::string arch, gemm = "auto";
};

/// The planner's settings as pipeline options, for pipelines `Self` registers.
template <class Self> struct PlannerOptionsOf : public mlir::PassPipelineOptions<Self> {
  using Base = mlir::PassPipelineOptions<Self>;
  typename Base::template Option<std::string> device{
      *this, "device", llvm::cl::desc("device profile"), llvm::cl::init("h100")};
  typename Base::template Option<double> copyBytesPerSec{
      *this, "copy-bytes-per-sec", llvm::cl::desc("measured copy bandwidth (0: the profile's)"),
      llvm::cl::init(0.0)};
  typename Base::template Option<int> smCount{
      *this, "sm-count", llvm::cl::desc("SMs of the GPU (0: the profile's)"), llvm::cl::init(0)};
  typename Base::template Option<std::string> arch{
      *this, "arch", llvm::cl::desc("NVRTC target (empty: the profile's)"), llvm::cl::init("")};
  typename Base::template Option<std::string> gemm{
      *this, "gemm", llvm::cl::desc("auto, fusec or cublaslt"), llvm::cl::init("auto")};
  PlannerSettings settings() const { return {device, copyBytesPerSec, smCount, arch, gemm}; }
};

struct PlannerOptions : PlannerOptionsOf<PlannerOptions> {};

struct FusionPipelineOptions : PlannerOptionsOf<FusionPipelineOptions> {
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("fuse (false: one kernel per op)"),
                    llvm::cl::init(true)};
  Option<int> ranks{*this, "ranks",
                    llvm::cl::desc("ranks to split the graph over by its sharded arguments"),
                    llvm::cl::init(1)};
};

/// The planner's passes, form-groups to outline-groups (-fusec-fuse-vertical).
void buildPlannerPipeline(mlir::OpPassManager &pm, const PlannerSettings &settings);

/// The decompose pipeline, then vertical fusion (or one group per op).
void buildFusionPipeline(mlir::OpPassManager &pm, const FusionPipelineOptions &options);

} // namespace fusec
