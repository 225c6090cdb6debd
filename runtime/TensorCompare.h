//===- TensorCompare.h - compare a result with a reference tensor ---------===//
#pragma once

#include "compiler/support/HostTensor.h"

#include <string>

namespace fusec {

struct CheckResult {
  double normRel = 0;    ///< ||out - ref|| / ||ref|| over finite reference elements
  double maxAbs = 0;     ///< largest |out - ref|
  int64_t nanMismatch = 0;  ///< NaN/Inf in one and not the other (unwritten outputs show here)
  int64_t mismatches = 0;   ///< integer/bool elements that differ
  int64_t differing = 0;    ///< finite float elements that differ at all
  double tolerance = 0;
  bool pass = false;
  std::string describe() const;
};

/// The tolerance of a dtype: f32 1e-5, f16/bf16 1e-2 (normwise relative), exact otherwise.
double toleranceFor(DType t);

/// Compares `out` with `ref` (same dtype and shape), within `tolerance`
/// (negative: the dtype's, toleranceFor).
CheckResult compareTensors(const HostTensor &out, const HostTensor &ref, double tolerance = -1);

} // namespace fusec
