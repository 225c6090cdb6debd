//===- KernelDedup.h - one compile per distinct kernel body -----*- C++ -*-===//
//
// A model's layers plan to the same kernels under different names: each
// kernel's name carries its plan position and its header comment the graph
// nodes it computes (a 16-layer decode stack has 160 kernels and 9 bodies).
// Compiling the canonical form, the name replaced by one placeholder and the
// header comment dropped, compiles each body once and lets the kernel cache
// serve it to every layer and every later graph that has it.
//
// Generated kernels keep state between launches in their scratch, never in
// module-scope variables, so identical bodies are interchangeable; each step
// still loads its own module (runtime/Executable.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef FUSEC_RUNTIME_KERNELDEDUP_H
#define FUSEC_RUNTIME_KERNELDEDUP_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace fusec {

/// The entry point's name in a canonical kernel source.
inline constexpr const char *kCanonicalKernelName = "fusec_kernel";

/// `source` with the whole-word occurrences of `name` replaced by
/// kCanonicalKernelName and the header comment ("// kernel <name> (...)" and
/// the "//   " lines under it) removed.
std::string canonicalKernelSource(llvm::StringRef name, llvm::StringRef source);

/// PTX compiled from a canonical source, its entry (and the entry's
/// parameter names) renamed to `name`.
std::string renameCanonicalPtx(llvm::StringRef ptx, llvm::StringRef name);

/// Groups equal canonical sources: `of[i]` is the index in `distinct` of
/// source i's canonical form, `first[d]` the first i with it.
struct KernelBodies {
  std::vector<std::string> distinct;
  std::vector<size_t> of, first;
};
KernelBodies distinctBodies(const std::vector<std::pair<std::string, std::string>> &namedSources);

} // namespace fusec

#endif // FUSEC_RUNTIME_KERNELDEDUP_H
