//===- Passes.h - fusec passes and pipelines ------------------------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace fusec {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Registers every fusec pass and the fusec pipelines with the global registry.
void registerPassesAndPipelines();

/// decompose, canonicalize, CSE: what `fusec compile --emit decomposed` prints.
void buildDecomposePipeline(mlir::OpPassManager &pm);

} // namespace fusec
