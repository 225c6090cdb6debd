//===- Failures.h - the failure count of a GPU test binary ----------------===//
//
// The GPU test binaries report each failed check as a "FAIL: ..." line on
// stderr and go on; the count sets the exit status at the end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace fusec::gputest {

inline int failures = 0;

inline void fail(const std::string &what) {
  ++failures;
  llvm::errs() << "FAIL: " << what << "\n";
}

} // namespace fusec::gputest
