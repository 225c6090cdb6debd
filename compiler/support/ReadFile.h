//===- ReadFile.h - every input and cache file, read bounded --------------===//
//
// The one way fusec reads a file it is given or finds in its cache: into
// memory, never mapped (another process rewriting a mapped file would kill
// fusec with SIGBUS), only if it is a regular file (a FIFO or a device such
// as /dev/zero is refused without blocking on it), and only up to a limit
// for its kind, so that no file makes fusec read without end. Errors name
// the file and the cause (docs/security.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace fusec {

/// Largest files of each kind fusec reads.
struct FileLimits {
  static constexpr uint64_t kGraph = uint64_t(1) << 30;        ///< JSON graphs
  static constexpr uint64_t kModel = uint64_t(2) << 30;        ///< ONNX protobufs (their own limit)
  static constexpr uint64_t kCacheEntry = uint64_t(256) << 20; ///< kernel-cache entries, cache JSON
  /// Tensors (inputs, weights, external data): what the host's memory holds.
  static uint64_t tensors();
};

/// The file at `path` (`what` it is, for messages: "graph", "cache entry"),
/// whole. Fails, naming the file, if it is missing or unreadable, not a
/// regular file, larger than `limit`, or changes size while it is read.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFileBounded(llvm::StringRef path, llvm::StringRef what, uint64_t limit);

/// `length` bytes at `offset` of the file at `path`, with the same checks.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFileSlice(llvm::StringRef path, llvm::StringRef what, uint64_t offset, uint64_t length);

/// Whether reading `path` failed because the file does not exist, or a
/// folder on its path does not (a cache miss rather than a damaged entry).
bool isMissingFile(const llvm::Error &err);

} // namespace fusec
