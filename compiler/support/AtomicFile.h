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
/// A symbolic link at `path` is written through (what it names is replaced,
/// as a shell's `>` writes through it), and a device or FIFO is written in
/// place; with `replaceEntry` whatever is at `path` is replaced by the new
/// regular file instead, never written through (the kernel cache, whose
/// directory others may write: a link planted there must not make fusec
/// write outside it).
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes,
                                bool replaceEntry = false);

} // namespace fusec
