//===- CollectiveStep.h - a collective group as a plan step ---------------===//
#pragma once

#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PlanDesc.h"

#include "llvm/Support/Error.h"

namespace fusec {

/// The NCCL call of a group of the collective family (Collective.cpp): its
/// one input, a contiguous buffer (the planner copies a strided view first),
/// goes from buffer `in`, the result to buffer `out`.
llvm::Expected<PlanCollective> collectiveStep(FusionOp fusion, int in, int out);

} // namespace fusec
