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

/// The program a sweep runs at each of its sizes: compiled for the size, or,
/// with --max over the swept name, one program resized to it (a padded size
/// compiled on its first use only).
class SweepPrograms {
public:
  SweepPrograms(std::string graph, PlanFlags plan, std::string name, bool forGpu);
  /// The program at `size`; errors say the size.
  llvm::Expected<Program *> at(int64_t size);
  /// Whether one program serves the sweep (--max over its name).
  bool padded() const { return isPadded; }
  /// The padded sizes compiled so far (one program's).
  int compiles() const { return program ? program->compiles() : 0; }

private:
  std::string graph, name;
  PlanFlags plan;
  bool forGpu, isPadded;
  std::unique_ptr<Program> program;
};

/// Explains `graph` at each size of `sweep` (with `plan`'s other flags):
/// text or JSON, one row a size.
llvm::Expected<std::string> explainSweep(const std::string &graph, const PlanFlags &plan,
                                         const Sweep &sweep, const std::string &format);

} // namespace fusec::cli
