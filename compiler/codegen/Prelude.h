//===- Prelude.h - device code every generated kernel starts with ---------===//
//
// Generated kernels include no headers (NVRTC compiles faster and nothing has
// to be found at run time): this prelude defines the storage types, dtype
// conversions, vector loads/stores and block reductions they use.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace fusec::codegen {

/// The prelude source (a few KB of CUDA C++).
const char *kernelPrelude();

} // namespace fusec::codegen
