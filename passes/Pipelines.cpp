//===- Pipelines.cpp - pass registration and the fusec pipelines ----------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace fusec {

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

void buildDecomposePipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createFusecDecompose());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerPassesAndPipelines() {
  registerFusecPasses();
  mlir::PassPipelineRegistration<>(
      "fusec-decompose-pipeline", "decompose composites, then canonicalize and CSE",
      buildDecomposePipeline);
}

} // namespace fusec
