//===- Sweep.h - one graph over a range of sizes of a named dim -----------===//
//
// `fusec explain --sweep S=1,16,128,1000,4096`: the graph compiled for each
// size of one of its named dims (the others bound by --bind), and a row a
// size of what the plan becomes there, so that a size where the plan falls
// off (a family switching, a kernel leaving a fusion) shows as a jump in the
// time per unit of size.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tools/fusec/Driver.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fusec::cli {

struct Sweep {
  std::string name;
  std::vector<int64_t> sizes;
};

/// "NAME=N,N,...": a named dim and its sizes (1 to 2^31, at most 64 of them).
llvm::Expected<Sweep> parseSweep(const std::string &text);

/// Explains `graph` at each size of `sweep` (with `plan`'s other flags):
/// text or JSON, one row a size.
llvm::Expected<std::string> explainSweep(const std::string &graph, const PlanFlags &plan,
                                         const Sweep &sweep, const std::string &format);

} // namespace fusec::cli
