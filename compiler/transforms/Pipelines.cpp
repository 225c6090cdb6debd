//===- Pipelines.cpp - pass registration and the fusec pipelines ----------===//
#include "compiler/transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace fusec {

#define GEN_PASS_REGISTRATION
#include "compiler/transforms/Passes.h.inc"

void buildDecomposePipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createFusecDecompose());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void buildFusionPipeline(mlir::OpPassManager &pm, const FusionPipelineOptions &options) {
  buildDecomposePipeline(pm);
  if (options.fuse) {
    pm.addNestedPass<mlir::func::FuncOp>(createFusecFoldRepeatedHeads());
    FusecFuseVerticalOptions o;
    o.device = options.device;
    o.copyBytesPerSec = options.copyBytesPerSec;
    o.smCount = options.smCount;
    o.arch = options.arch;
    o.gemm = options.gemm;
    pm.addNestedPass<mlir::func::FuncOp>(createFusecFuseVertical(o));
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
      buildDecomposePipeline);
  mlir::PassPipelineRegistration<FusionPipelineOptions>(
      "fusec-fusion-pipeline", "decompose, then form fused groups (what `fusec compile` runs)",
      buildFusionPipeline);
}

} // namespace fusec
