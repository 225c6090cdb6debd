//===- PaddedCall.h - a call of a plan compiled at padded sizes -----------===//
//
// A plan compiled at padded sizes (PlanDesc::padded, compiler/plan/PlanPadding.h)
// runs calls made at smaller sizes: the caller's device tensors are copied
// into the padded buffers (PaddedBuffers.h), the sizes written where the
// plan takes them, the plan run, and each output cut back into the caller's
// tensor, all on the call's stream. Program (api/PaddedProgram.cpp) and
// CompiledGraph (api/CompiledGraph.cpp) run their padded calls through it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PlanPadding.h"
#include "runtime/Executable.h"
#include "runtime/PaddedBuffers.h"

#include <cstdint>
#include <vector>

namespace fusec {

/// Runs `exe` (a padded plan) for a call at `call`'s sizes on `stream`, as a
/// CUDA graph where `asGraph`. `in` and `out` are the call's device
/// pointers: every input of `call`, or, where `weightsBound`, those that are
/// not `parameters` (per plan input). `inputPadded` marks call inputs passed
/// at their padded shape, in place.
rt::Error enqueuePadded(Executable &exe, PaddedBuffers &buffers, const PaddedCallSpecs &call,
                        const std::vector<bool> &parameters, bool weightsBound,
                        const std::vector<bool> &inputPadded, const std::vector<uint64_t> &in,
                        const std::vector<uint64_t> &out, CUstream stream, bool asGraph);

/// runHost() of a padded plan: `inputs` (every input of `call`, or where
/// `weightsBound` those that are not `parameters`) padded on the host, run
/// on `exe` (runOnHostTensors: outputs poisoned first), the outputs cut back
/// to `call`'s sizes. `inputsWrong` is set where the inputs do not fit.
rt::Error runPaddedOnHost(Executable &exe, CudaDriver &drv, const PaddedCallSpecs &call,
                          const std::vector<bool> &parameters, bool weightsBound,
                          const std::vector<HostTensor> &inputs, std::vector<HostTensor> &outputs,
                          bool asGraph, bool &inputsWrong);

/// Binds `weights` (DeviceWeights::pointers() of another compile of the same
/// graph) to `exe`, a compile at other padded sizes: their size arguments,
/// which come last, may differ in number.
rt::Error bindWeightsOfAnotherCompile(Executable &exe, std::vector<CUdeviceptr> weights);

/// setInputPadded(i, padded) of a program or artifact whose calls take
/// `callInputs` inputs: the flag set, or an error for an input out of range.
rt::Error setInputPaddedFlag(std::vector<bool> &flags, size_t callInputs, size_t i, bool padded);

} // namespace fusec
