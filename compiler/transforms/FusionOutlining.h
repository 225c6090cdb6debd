//===- FusionOutlining.h - turn groups of ops into fusec.fusion ops -------===//
//
// Shared by -fusec-fuse-vertical and -fusec-outline-single-ops: given groups
// of compute ops, each group becomes one fusec.fusion region op. Views and
// generators that feed a group are cloned into it (they are index math, never
// kernels); a graph output that is only a view, a generator or an input gets a
// pointwise copy group of its own, since outputs are fresh buffers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace fusec {

using OpGroup = std::vector<mlir::Operation *>;

/// Compute ops of `func` in program order (everything but views, generators
/// and the terminator).
std::vector<mlir::Operation *> computeOps(mlir::func::FuncOp func);

/// Outlines every group (compute ops in program order) into a fusec.fusion op
/// annotated with its schedule and cost for `profile`. Fails (with a
/// diagnostic) if a group fits no kernel family.
mlir::LogicalResult outlineGroups(mlir::func::FuncOp func, const std::vector<OpGroup> &groups,
                                  const DeviceProfile &profile);

} // namespace fusec
