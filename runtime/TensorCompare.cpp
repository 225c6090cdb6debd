//===- TensorCompare.cpp - compare a result with a reference tensor -------===//
//
// The error measure is normwise, ||out - ref|| / ||ref|| (METHOD.md): fused
// kernels keep fp32 intermediates where the op-by-op reference rounds every
// step, so single elements near zero can differ by more than the dtype's
// epsilon while the result as a whole agrees. NaN/Inf must match exactly: an
// output element that no kernel wrote keeps its NaN poison and fails here.
//
//===----------------------------------------------------------------------===//
#include "runtime/TensorCompare.h"

#include <cmath>
#include <cstdio>

namespace fusec {

double toleranceFor(DType t) {
  switch (t) {
  case DType::F32: return 1e-5;
  case DType::F16: case DType::BF16: return 1e-2;
  default: return 0;
  }
}

CheckResult compareTensors(const HostTensor &out, const HostTensor &ref, double tolerance) {
  CheckResult r;
  r.tolerance = tolerance >= 0 ? tolerance : toleranceFor(ref.dtype());
  double diff2 = 0, ref2 = 0;
  bool exact = !isFloat(ref.dtype());
  for (int64_t i = 0; i < ref.numel(); ++i) {
    if (exact) {
      if (out.getInt(i) != ref.getInt(i))
        ++r.mismatches;
      continue;
    }
    double a = out.get(i), b = ref.get(i);
    bool af = std::isfinite(a), bf = std::isfinite(b);
    if (af != bf || (!af && !(std::isnan(a) && std::isnan(b)) && a != b)) {
      ++r.nanMismatch;
      continue;
    }
    if (!bf)
      continue;
    if (a != b)
      ++r.differing;  // what an exact comparison (tolerance 0) counts
    diff2 += (a - b) * (a - b);
    ref2 += b * b;
    r.maxAbs = std::max(r.maxAbs, std::fabs(a - b));
  }
  r.normRel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  r.pass = r.nanMismatch == 0 && r.mismatches == 0 && r.normRel <= r.tolerance;
  return r;
}

std::string CheckResult::describe() const {
  char buf[256];
  if (tolerance == 0) {
    std::snprintf(buf, sizeof buf, "%s: %lld of the elements differ (exact match required)",
                  pass ? "ok" : "FAIL", (long long)(mismatches + differing + nanMismatch));
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "%s: rel error %.3g (tolerance %.0e), max abs error %.3g, NaN/Inf mismatches %lld",
                pass ? "ok" : "FAIL", normRel, tolerance, maxAbs, (long long)nanMismatch);
  return buf;
}

} // namespace fusec
