//===- ReductionPhases.h - what the reduction kernel families share -------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"

#include <map>
#include <vector>

namespace fusec::codegen::detail {

/// Whether `op` is one of sum, mean, max, min.
bool isReduction(mlir::Operation *op);

/// The reductions of a fusion body grouped into phases: a reduction that needs
/// another's result (layer_norm's variance needs its mean) comes a phase later.
/// Keys are 1, 2, ...; each phase's reductions in body order.
std::map<int, std::vector<mlir::Operation *>> reductionPhases(FusionOp fusion);

/// The iteration domain of a reduction group, from its schedule attributes.
struct ReductionDomain {
  std::vector<int64_t> domain, reduced, kept;
  int64_t reducedCount = 1, keptCount = 1;  ///< elements along the reduced / kept dims
};
ReductionDomain reductionDomain(FusionOp fusion);

} // namespace fusec::codegen::detail
