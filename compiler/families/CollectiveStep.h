//===- CollectiveStep.h - a collective group as a plan step ---------------===//
#pragma once

#include "compiler/cost/DeviceProfile.h"
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PlanDesc.h"

#include "llvm/Support/Error.h"

namespace fusec {

struct Cost;
namespace families {
/// Whether fusec's one-shot kernel over peer memory runs the collective
/// priced `c` (an all-reduce of floats small enough, where it is cheaper
/// than NCCL) rather than NCCL: the plan and every prediction ask this.
bool overPeerMemory(const Cost &c, const DeviceProfile &p);
/// The one-shot all-reduce's latency on `p`: a launch and a flag round trip,
/// or at the start of a row kernel (`inRowKernel`) the round trip alone.
double oneShotLatencySeconds(const DeviceProfile &p, bool inRowKernel);
/// What an all-reduce of floats (the share of `c` it makes up) adds to the
/// row kernel it begins (GroupSchedule.h, kOneShotAttr): the one-shot
/// exchange less a launch; 0 for a cost without one.
double reducedFirstSeconds(const Cost &c, const DeviceProfile &p);
} // namespace families

/// A group of the collective family (Collective.cpp) as a plan step: its
/// one input, a contiguous buffer (the planner copies a strided view first),
/// goes from buffer `in`, the result to buffer `out`. Fills step.collective,
/// and step.kernel where the one-shot kernel over peer memory runs it
/// (PlanCollective::peer); `step.name` names that kernel.
llvm::Error collectiveStep(FusionOp fusion, int in, int out, const DeviceProfile &profile,
                           PlanStep &step);

/// A kernel step whose group begins with an all-reduce of its input (a row
/// kernel, GroupSchedule.h): step.collective says which buffer (src = dst,
/// of the inputs `in`), for the runtime to hand the kernel every rank's
/// region, or, where the ranks do not reach each other's memory, to reduce
/// that buffer in place through NCCL first. Leaves other steps alone.
void reducedFirstStep(FusionOp fusion, const std::vector<int> &in, PlanStep &step);

} // namespace fusec
