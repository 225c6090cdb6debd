//===- KernelCacheConcurrencyTest.cpp - processes sharing a cache --------===//
//
// Several processes compile the same kernels into one directory at once. The
// rename in writeFileAtomically is what makes this safe: a reader sees an old
// complete entry, a new complete entry, or none, so no process may ever count
// a damaged entry, and every entry must be valid afterwards.
//
//===----------------------------------------------------------------------===//
#include "runtime/KernelCache.h"

#include "test/unit/runtime/RuntimeTestUtil.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace fusec;
using namespace fusec::test;

namespace fusec::test {

int runKernelCacheWorker(const std::string &dir) {
  // Several rounds, each with a fresh cache: later rounds read what this and
  // the other workers wrote, while those may still be replacing it.
  for (int round = 0; round < 3; ++round) {
    CacheOptions options;
    options.directory = dir;
    options.log = [](CacheLogLevel, llvm::StringRef message) {
      llvm::errs() << "worker: " << message << "\n";
    };
    KernelCache cache(std::move(options));
    std::vector<KernelSource> kernels = sampleKernels();
    std::vector<KernelCache::Result> results =
        cache.getOrCompileAll(kernels, 2);
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i]) {
        llvm::errs() << "worker: " << kernels[i].name << ": "
                     << llvm::toString(results[i].takeError()) << "\n";
        return 1;
      }
      if (!llvm::StringRef((*results[i])->cubin)
               .starts_with("\x7f"
                            "ELF")) {
        llvm::errs() << "worker: " << kernels[i].name << ": not a cubin\n";
        return 1;
      }
    }
    CacheStats stats = cache.stats();
    if (stats.corruptEntries != 0) {
      llvm::errs() << "worker: saw " << stats.corruptEntries
                   << " damaged entries\n";
      return 2;
    }
  }
  return 0;
}

} // namespace fusec::test

namespace {

TEST(KernelCacheConcurrency, ProcessesShareOneDirectory) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  std::string self = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&runKernelCacheWorker));
  ASSERT_FALSE(self.empty());

  constexpr int kWorkers = 4;
  std::vector<llvm::sys::ProcessInfo> workers;
  for (int i = 0; i < kWorkers; ++i) {
    std::string error;
    llvm::StringRef args[] = {self, "--kernel-cache-worker", dir.path()};
    workers.push_back(
        llvm::sys::ExecuteNoWait(self, args, std::nullopt, {}, 0, &error));
    ASSERT_NE(workers.back().Pid, 0) << error;
  }
  for (int i = 0; i < kWorkers; ++i) {
    std::string error;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(workers[i], /*SecondsToWait=*/300, &error);
    EXPECT_EQ(done.ReturnCode, 0) << "worker " << i << ": " << error;
  }

  // Afterwards: one valid entry per kernel and no temporary files.
  KernelCache cache(CacheOptions{dir.path(), {}});
  std::vector<KernelSource> kernels = sampleKernels();
  std::vector<std::string> expected;
  for (const KernelSource &kernel : kernels)
    expected.push_back(cache.keyFor(kernel) + ".cubin");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(listDirectory(dir.path()), expected);
  for (KernelCache::Result &result : cache.getOrCompileAll(kernels, 2))
    EXPECT_TRUE(bool(result)) << llvm::toString(result.takeError());
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.diskHits, kernels.size());
  EXPECT_EQ(stats.compiles, 0u);
  EXPECT_EQ(stats.corruptEntries, 0u);
}

} // namespace
