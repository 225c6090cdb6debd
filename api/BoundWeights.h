//===- BoundWeights.h - weights bound to a loaded program, for the API ----===//
//
// Program::bindWeights and CompiledGraph::bindWeights (and the weights an
// artifact embeds) go through here: the files matched to the parameters,
// the tensors copied to the GPU once and bound to the executable, a failure
// given the code a caller acts on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fusec/Status.h"
#include "runtime/DeviceWeights.h"
#include "runtime/Executable.h"

#include <memory>
#include <optional>
#include <vector>

namespace fusec {

/// Binds `files` to `exe`'s parameters into `held`. Weights bound before are
/// released once the GPU has finished with them (no call still reads
/// them). InvalidArgument for files that do not match the parameters.
/// With `blocks` (one rank of a split program) the files hold the weights
/// whole and the rank's blocks are bound.
Status bindWeightFiles(Executable &exe, const GpuContext &ctx, rt::Expected<WeightFiles> files,
                       const std::vector<bool> &parameters,
                       std::unique_ptr<DeviceWeights> &held,
                       const std::optional<RankBlocks> &blocks = std::nullopt);

} // namespace fusec
