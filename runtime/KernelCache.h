//===- KernelCache.h - compiled kernels in memory and on disk ------------===//
//
// NVRTC takes tens to hundreds of milliseconds per kernel; a plan has dozens.
// The cache keeps every compiled kernel in memory for the process and on disk
// across processes, keyed by everything that decides the compiler's output.
// KernelCache.md, next to this file, is the design: key, file format,
// concurrency and what happens to a damaged entry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Nvrtc.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fusec {

/// Where the on-disk cache lives, from the environment: $FUSEC_CACHE_DIR,
/// else $XDG_CACHE_HOME/fusec/kernels, else $HOME/.cache/fusec/kernels.
/// FUSEC_CACHE_DIR=off (or none) disables the disk cache: std::nullopt.
std::optional<std::string> cacheDirectory();

/// The two kinds of message the cache has to say.
enum class CacheLogLevel {
  Debug,   ///< a damaged entry was replaced: worth knowing, nothing to do
  Warning, ///< the disk cache cannot be used: every run will recompile
};

struct CacheOptions {
  /// The directory of the disk cache; std::nullopt keeps kernels in memory
  /// only. A default-constructed CacheOptions is memory-only; use
  /// fromEnvironment() for the user's cache.
  std::optional<std::string> directory;
  /// Receives the cache's messages. Unset: warnings go to stderr as
  /// "fusec: warning: ...", debug notes to LLVM_DEBUG (fusec-kernel-cache).
  std::function<void(CacheLogLevel, llvm::StringRef)> log;

  /// directory = cacheDirectory().
  static CacheOptions fromEnvironment();
};

/// Counters since the cache was created.
struct CacheStats {
  uint64_t memoryHits = 0;
  uint64_t diskHits = 0;
  uint64_t compiles = 0;       ///< NVRTC runs, successful or not
  uint64_t corruptEntries = 0; ///< disk entries rejected and recompiled
  uint64_t diskWrites = 0;     ///< entries stored on disk
};

/// A cache of compiled kernels shared by all threads of a process; several
/// processes may share one directory.
class KernelCache {
public:
  using Result = llvm::Expected<std::shared_ptr<const CompiledKernel>>;

  explicit KernelCache(CacheOptions options);

  /// The compiled kernel for `kernel`: from memory, else from disk (checked
  /// in full), else compiled by NVRTC and stored in both. Compile errors are
  /// returned as they are and nothing is stored for them. Thread-safe; two
  /// threads asking for the same kernel compile it once.
  Result getOrCompile(const KernelSource &kernel);

  /// getOrCompile for each kernel, on up to `threads` threads (0: one per
  /// hardware thread). Result i belongs to kernels[i] whatever the order in
  /// which they finish.
  std::vector<Result> getOrCompileAll(const std::vector<KernelSource> &kernels,
                                      unsigned threads);

  /// The key of `kernel`: 64 hex digits of SHA-256 over the source, the
  /// architecture, the options, the output kind, the NVRTC version and the
  /// entry format version.
  std::string keyFor(const KernelSource &kernel) const;

  /// The file that holds (or would hold) `kernel`; std::nullopt without a
  /// disk cache.
  std::optional<std::string> entryPath(const KernelSource &kernel) const;

  /// The disk directory in use; std::nullopt when memory-only.
  const std::optional<std::string> &directory() const {
    return options.directory;
  }

  CacheStats stats() const;

private:
  /// One key's slot; its mutex is held while the kernel is loaded or
  /// compiled so that concurrent requests wait instead of compiling again.
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<const CompiledKernel> kernel;
  };

  std::shared_ptr<Slot> slotFor(const std::string &key);
  using Digest = std::array<uint8_t, 32>;
  std::shared_ptr<const CompiledKernel>
  loadFromDisk(const Digest &key, const KernelSource &kernel);
  void storeOnDisk(const Digest &key, const KernelSource &kernel,
                   const CompiledKernel &compiled);
  void rejectEntry(const std::string &path, llvm::StringRef reason);
  void report(CacheLogLevel level, llvm::StringRef message);

  CacheOptions options;
  int nvrtcVersionUsed = 0;

  std::mutex slotsMutex;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots;

  std::mutex reportMutex;
  std::set<std::string> reportedPaths; ///< each damaged entry is told once
  bool writeWarningGiven = false;
  std::atomic<bool> diskWritable{true};

  std::atomic<uint64_t> memoryHits{0}, diskHits{0}, compiles{0},
      corruptEntries{0}, diskWrites{0};
};

} // namespace fusec
