//===- Autotune.h - `fusec bench --autotune`: time GEMM candidates --------===//
#pragma once

#include "tools/fusec/BenchTiming.h"
#include "tools/fusec/Driver.h"

#include "llvm/Support/Error.h"

#include <string>

namespace fusec::cli {

/// Builds the fused plan of `graph` once per candidate (every fusec GEMM
/// kernel takes its i-th tile configuration, every cuBLASLt matmul its
/// heuristic's i-th usable algorithm), times each product alone, and writes
/// the fastest configuration per tuning key into the tuning cache
/// (runtime/TuningCache.h). Prints one line per key to stderr.
llvm::Error autotuneGemms(const std::string &graph, const PlanFlags &flags,
                          const BenchSettings &settings);

} // namespace fusec::cli
