//===- AtomicFile.h - replace a file's contents all at once --------------===//
//
// Readers of a path written this way see either the old file or the complete
// new one, never a prefix: used for safetensors outputs and the kernel cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace fusec {

/// Writes `bytes` to a unique temporary file in the directory of `path`, syncs
/// it to disk and renames it over `path`. On failure the temporary file is
/// removed, `path` is left as it was, and the error names the path and the
/// system's reason.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes);

} // namespace fusec
