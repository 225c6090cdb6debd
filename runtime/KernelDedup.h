//===- KernelDedup.h - one compile per distinct kernel body -----*- C++ -*-===//
//
// A model's layers plan to the same kernels under different names: each
// kernel's name starts with its plan position (k12_matmul_add) and its header
// comment lists the graph nodes it computes (a 16-layer decode stack has 160
// kernels and 9 bodies). Compiling the canonical form, the position dropped
// from the name (k_matmul_add) and the header comment dropped, compiles each
// body once and lets the kernel cache serve it to every layer and every later
// graph that has it; profilers then show every layer's copy as k_matmul_add.
//
// Generated kernels keep state between launches in their scratch, never in
// module-scope variables, and each step loads its own module and sets its own
// launch attributes on it (runtime/Executable.cpp), so steps with one body
// share only the compiled code.
//
//===----------------------------------------------------------------------===//
#ifndef FUSEC_RUNTIME_KERNELDEDUP_H
#define FUSEC_RUNTIME_KERNELDEDUP_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace fusec {

/// The entry point's name in the canonical source of kernel `name`:
/// "k<digits>_rest" becomes "k_rest"; other names stay as they are.
std::string canonicalKernelName(llvm::StringRef name);

/// A kernel's canonical form: `source` with the header comment ("// kernel
/// <name> (...)" and the "//   " lines under it) removed and the
/// whole-identifier occurrences of `name` replaced by `entry`, which is
/// canonicalKernelName(name), or `name` itself where that would collide with
/// an identifier already in the source.
struct CanonicalKernel {
  std::string source, entry;
};
CanonicalKernel canonicalKernel(llvm::StringRef name, llvm::StringRef source);

/// PTX compiled from a canonical source whose entry is `entry`, renamed back
/// to `name` (the entry, its parameters, its static shared arrays): the PTX
/// of the named source.
std::string renameCanonicalPtx(llvm::StringRef ptx, llvm::StringRef entry, llvm::StringRef name);

/// Groups equal canonical sources: `of[i]` is the index in `distinct` of
/// source i's canonical form, `first[d]` the first i with it, `entry[d]` the
/// body's entry point.
struct KernelBodies {
  std::vector<std::string> distinct, entry;
  std::vector<size_t> of, first;
};
KernelBodies distinctBodies(const std::vector<std::pair<std::string, std::string>> &namedSources);

} // namespace fusec

#endif // FUSEC_RUNTIME_KERNELDEDUP_H
