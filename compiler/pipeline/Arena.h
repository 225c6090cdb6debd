//===- Arena.h - place temporaries in one device arena by liveness --------===//
#pragma once

#include "compiler/plan/PlanDesc.h"

namespace fusec {

/// Gives every Temp buffer of `plan` an arena offset (256-byte aligned) such
/// that buffers alive at the same step never overlap, and sets arenaBytes.
/// Greedy: largest first, lowest free offset.
void placeTemporaries(PlanDesc &plan);

/// For each buffer, the first and last step that touches it (-1 if none).
std::vector<std::pair<int, int>> bufferLifetimes(const PlanDesc &plan);

} // namespace fusec
