//===- Nvrtc.h - compile generated CUDA C++ with NVRTC -------------------===//
//
// NVRTC is opened with dlopen on first use (libnvrtc.so.13, then .12, then
// the toolkit's lib64 directories), so fusec starts and emits CUDA without a
// toolkit installed. Generated kernels include no headers: each carries its
// own small prelude, so no include paths are passed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/support/LlvmError.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace fusec {

/// One translation unit to compile.
struct KernelSource {
  /// The kernel's name, used for the program name ("<name>.cu") and in every
  /// message about it.
  std::string name;
  /// Complete CUDA C++ source.
  std::string source;
  /// A real architecture such as "sm_80" or "sm_90a", giving a cubin; for
  /// PTX, "compute_90a" or a real one (mapped to its virtual counterpart).
  std::string arch;
  /// Extra NVRTC options, after the ones compile() always passes.
  std::vector<std::string> options;
  /// Produce PTX text (for `fusec compile --emit ptx`) instead of a cubin.
  bool emitPtx = false;
};

/// The result of one compilation.
struct CompiledKernel {
  /// The cubin's bytes; empty when PTX was asked for.
  std::string cubin;
  /// The PTX text; empty unless KernelSource::emitPtx was set.
  std::string ptx;
  /// NVRTC's log: empty, or warnings for a successful compilation.
  std::string log;

  /// What cuModuleLoadData takes: the cubin, or else the PTX.
  const std::string &image() const { return ptx.empty() ? cubin : ptx; }
};

/// Compiles `kernel` with `--gpu-architecture=<arch> -default-device
/// --std=c++17` followed by its own options. Thread-safe; independent
/// kernels may compile concurrently. A failure names the kernel and the
/// architecture and carries NVRTC's full log and the source with line
/// numbers, so the failing line can be read straight from the message.
llvm::Expected<CompiledKernel> compile(const KernelSource &kernel);

/// The options compile() passes for `kernel`, in order (the cache key and
/// error messages show exactly these).
std::vector<std::string> nvrtcOptions(const KernelSource &kernel);

/// Loads NVRTC if that has not happened yet; the error lists every path
/// tried.
llvm::Error loadNvrtc();

/// NVRTC's version as major * 1000 + minor * 10 (13000 for 13.0), or 0 when
/// NVRTC cannot be loaded.
int nvrtcVersion();

} // namespace fusec
