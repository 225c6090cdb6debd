//===- E2eChecks.h - what the GPU end-to-end checks share ------------------===//
#pragma once

#include "runtime/CudaDriver.h"

#include <cstdlib>
#include <string>

namespace fusec::e2e {

struct Tally {
  int passed = 0, failed = 0;
};

/// FUSEC_GPU_TEST_FILTER=text runs only the checks whose label holds it (on
/// a leased GPU, one family at a time); unset, every check runs.
inline bool selected(const std::string &label) {
  const char *f = std::getenv("FUSEC_GPU_TEST_FILTER");
  return f == nullptr || label.find(f) != std::string::npos;
}

/// The programs compiled with Options::maxSizes (e2e_padded.cpp): one over
/// several sizes through run, replay and runHost; a decode step with its
/// cache read in place; the same with weights bound while it resizes.
void checkPaddedPrograms(CudaDriver &drv, Tally &t);

} // namespace fusec::e2e
