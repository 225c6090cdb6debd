//===- CompileKernels.h - a plan's kernels through the kernel cache -------===//
//
// The compiler's half of loading a plan: each distinct kernel body compiled
// by NVRTC (or found in the kernel cache), in parallel. The images go to
// Executable::create, or into an artifact (runtime/Artifact.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/plan/PlanDesc.h"
#include "runtime/KernelCache.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string_view>
#include <vector>

namespace fusec {

struct CompiledBodies {
  /// One per distinct body, in kernelBodies(plan).firstStep order.
  std::vector<std::shared_ptr<const CompiledKernel>> bodies;
  double seconds = 0;  ///< wall time, cache hits included
  unsigned hits = 0;   ///< bodies found in the cache (memory or disk)
  /// The cubins, as Executable::create takes them (valid while `bodies` lives).
  std::vector<std::string_view> images() const;
};

/// Compiles every distinct kernel body of `plan` for `arch` (empty: the
/// plan's), each once, on up to 8 threads. The first failure is the error.
llvm::Expected<CompiledBodies> compileKernels(const PlanDesc &plan, KernelCache &cache,
                                              const std::string &arch = "");

} // namespace fusec
