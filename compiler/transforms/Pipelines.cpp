//===- Pipelines.cpp - pass registration and the fusec pipelines ----------===//
#include "compiler/transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace fusec {

#define GEN_PASS_REGISTRATION
#include "compiler/transforms/Passes.h.inc"

void buildDecomposePipeline(mlir::OpPassManager &pm, int ranks) {
  pm.addNestedPass<mlir::func::FuncOp>(createFusecDecompose());
  pm.addNestedPass<mlir::func::FuncOp>(createFusecSplitWideConcats());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (ranks > 1)
    buildPartitionPipeline(pm, ranks);
}

void buildPartitionPipeline(mlir::OpPassManager &pm, int ranks) {
  FusecPartitionOptions o;
  o.ranks = ranks;
  pm.addNestedPass<mlir::func::FuncOp>(createFusecPartition(o));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

namespace {
/// One planner pass's options (every planner pass takes the same ones).
template <class PassOptions> PassOptions plannerOptions(const PlannerSettings &p) {
  PassOptions o;
  o.device = p.device;
  o.copyBytesPerSec = p.copyBytesPerSec;
  o.smCount = p.smCount;
  o.arch = p.arch;
  o.gemm = p.gemm;
  return o;
}
} // namespace

void buildPlannerPipeline(mlir::OpPassManager &pm, const PlannerSettings &p) {
  auto add = [&](std::unique_ptr<mlir::Pass> pass) {
    pm.addNestedPass<mlir::func::FuncOp>(std::move(pass));
  };
  add(createFusecFormAttention(plannerOptions<FusecFormAttentionOptions>(p)));
  add(createFusecFormGroups(plannerOptions<FusecFormGroupsOptions>(p)));
  add(createFusecRecomputeProducers(plannerOptions<FusecRecomputeProducersOptions>(p)));
  add(createFusecChooseGemmPaths(plannerOptions<FusecChooseGemmPathsOptions>(p)));
  // Split-off prologues and epilogues may now join their neighbours.
  add(createFusecFormGroups(plannerOptions<FusecFormGroupsOptions>(p)));
  add(createFusecFuseSiblings(plannerOptions<FusecFuseSiblingsOptions>(p)));
  add(createFusecOutlineGroups(plannerOptions<FusecOutlineGroupsOptions>(p)));
}

void buildFusionPipeline(mlir::OpPassManager &pm, const FusionPipelineOptions &options) {
  buildDecomposePipeline(pm, options.ranks);
  if (options.fuse) {
    pm.addNestedPass<mlir::func::FuncOp>(createFusecPickEarly());
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    pm.addNestedPass<mlir::func::FuncOp>(createFusecFoldRepeatedHeads());
    pm.addNestedPass<mlir::func::FuncOp>(createFusecCloneIndexMath());
    buildPlannerPipeline(pm, options.settings());
  } else {
    FusecOutlineSingleOpsOptions o;
    o.device = options.device;
    o.copyBytesPerSec = options.copyBytesPerSec;
    o.smCount = options.smCount;
    pm.addNestedPass<mlir::func::FuncOp>(createFusecOutlineSingleOps(o));
  }
  FusecSelectKernelsOptions s;
  s.device = options.device;
  s.copyBytesPerSec = options.copyBytesPerSec;
  s.smCount = options.smCount;
  s.arch = options.arch;
  pm.addNestedPass<mlir::func::FuncOp>(createFusecSelectKernels(s));
}

void registerPassesAndPipelines() {
  registerFusecPasses();
  mlir::PassPipelineRegistration<>(
      "fusec-decompose-pipeline", "decompose composites, then canonicalize and CSE",
      [](mlir::OpPassManager &pm) { buildDecomposePipeline(pm); });
  mlir::PassPipelineRegistration<PlannerOptions>(
      "fusec-fuse-vertical",
      "the planner: form groups, recompute producers, choose GEMM paths, form groups "
      "again, fuse siblings, outline",
      [](mlir::OpPassManager &pm, const PlannerOptions &o) {
        buildPlannerPipeline(pm, o.settings());
      });
  mlir::PassPipelineRegistration<FusionPipelineOptions>(
      "fusec-fusion-pipeline", "decompose, then form fused groups (what `fusec compile` runs)",
      buildFusionPipeline);
}

} // namespace fusec
