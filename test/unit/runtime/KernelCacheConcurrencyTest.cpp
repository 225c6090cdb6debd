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

#include "compiler/support/AtomicFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

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

namespace fusec::test {

int runTolerantKernelCacheWorker(const std::string &dir, const std::string &out) {
  std::string lines;
  size_t compiles = 0, corrupt = 0;
  for (int round = 0; round < 3; ++round) {
    CacheOptions options;
    options.directory = dir;
    options.log = [](CacheLogLevel, llvm::StringRef) {};  // damage is expected here
    KernelCache cache(std::move(options));
    std::vector<KernelSource> kernels = sampleKernels();
    std::vector<KernelCache::Result> results = cache.getOrCompileAll(kernels, 2);
    lines.clear();
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i]) {
        llvm::errs() << "worker: " << kernels[i].name << ": "
                     << llvm::toString(results[i].takeError()) << "\n";
        return 1;
      }
      const std::string &cubin = (*results[i])->cubin;
      if (!llvm::StringRef(cubin).starts_with("\x7f"
                                              "ELF")) {
        llvm::errs() << "worker: " << kernels[i].name << ": not a cubin\n";
        return 1;
      }
      lines += kernels[i].name + " " + llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(cubin))) + "\n";
    }
    compiles += cache.stats().compiles;
    corrupt += cache.stats().corruptEntries;
  }
  std::error_code ec;
  llvm::raw_fd_ostream o(out, ec), stats(out + ".stats", ec);
  if (ec)
    return 3;
  o << lines;
  stats << compiles << " " << corrupt << "\n";
  return 0;
}

int runKernelCacheCorruptor(const std::string &dir) {
  std::mt19937 rng(12345);
  for (;;) {
    std::vector<std::string> files = listDirectory(dir);
    if (files.empty()) {
      ::usleep(1000);
      continue;
    }
    const std::string path = dir + "/" + files[rng() % files.size()];
    // Mostly damage in place (what a reader must detect), sometimes a
    // replacement or a removal; a few milliseconds apart, so that readers
    // meet damaged entries rather than only missing ones.
    switch (rng() % 8) {
    case 0:
    case 1:
    case 2: {  // truncated in place
      int fd = ::open(path.c_str(), O_WRONLY);
      if (fd >= 0) {
        (void)::ftruncate(fd, static_cast<off_t>(rng() % 256));
        ::close(fd);
      }
      break;
    }
    case 3:
    case 4:
    case 5: {  // a byte flipped in place
      int fd = ::open(path.c_str(), O_RDWR);
      if (fd >= 0) {
        struct stat st;
        if (::fstat(fd, &st) == 0 && st.st_size > 0) {
          off_t at = static_cast<off_t>(rng() % static_cast<unsigned>(st.st_size));
          char c = 0;
          if (::pread(fd, &c, 1, at) == 1) {
            c ^= static_cast<char>(1 + rng() % 255);
            (void)::pwrite(fd, &c, 1, at);
          }
        }
        ::close(fd);
      }
      break;
    }
    case 6: {  // replaced by garbage
      std::string garbage(static_cast<size_t>(rng() % 4096), 'x');
      (void)writeFileAtomically(path, garbage);
      break;
    }
    default:  // removed
      (void)::unlink(path.c_str());
    }
    ::usleep(3000);
  }
}

} // namespace fusec::test

namespace {

// Eight processes compile the same kernels into one directory while another
// damages its entries (truncates, flips bytes, replaces, removes them) the
// whole time: every process gets every kernel, damaged entries are only ever
// recompiled (entries are read into memory and checksummed, never mapped),
// and all of them end with the same cubins as a compile without a cache.
TEST(KernelCacheConcurrency, ProcessesSurviveACorruptingProcess) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir, outs;
  std::string self = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&runKernelCacheWorker));
  ASSERT_FALSE(self.empty());
  // Every entry damaged before anyone reads it: whatever the timing, each
  // kernel is compiled again at least once.
  std::vector<KernelSource> kernels = sampleKernels();
  {
    KernelCache writer(CacheOptions{dir.path(), {}});
    for (KernelCache::Result &r : writer.getOrCompileAll(kernels, 2))
      ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    for (const KernelSource &k : kernels)
      ASSERT_FALSE(bool(writeFileAtomically(*writer.entryPath(k), "damaged")));
  }
  std::string error;
  llvm::StringRef corruptorArgs[] = {self, "--kernel-cache-corruptor", dir.path()};
  llvm::sys::ProcessInfo corruptor =
      llvm::sys::ExecuteNoWait(self, corruptorArgs, std::nullopt, {}, 0, &error);
  ASSERT_NE(corruptor.Pid, 0) << error;

  constexpr int kWorkers = 8;
  std::vector<llvm::sys::ProcessInfo> workers;
  std::vector<std::string> results;
  for (int i = 0; i < kWorkers; ++i) {
    results.push_back(outs.path() + "/worker" + std::to_string(i));
    llvm::StringRef args[] = {self, "--kernel-cache-tolerant-worker", dir.path(), results.back()};
    workers.push_back(llvm::sys::ExecuteNoWait(self, args, std::nullopt, {}, 0, &error));
    ASSERT_NE(workers.back().Pid, 0) << error;
  }
  for (int i = 0; i < kWorkers; ++i) {
    llvm::sys::ProcessInfo done = llvm::sys::Wait(workers[i], /*SecondsToWait=*/600, &error);
    EXPECT_EQ(done.ReturnCode, 0) << "worker " << i << ": " << error;
  }
  ::kill(corruptor.Pid, SIGKILL);
  llvm::sys::Wait(corruptor, /*SecondsToWait=*/0, &error);

  // The cubins every worker ended with: those of a compile without a cache.
  KernelCache reference{CacheOptions{}};  // memory only
  std::string expected;
  for (size_t i = 0; i < kernels.size(); ++i) {
    auto r = reference.getOrCompile(kernels[i]);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    expected += kernels[i].name + " " +
                llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef((*r)->cubin))) + "\n";
  }
  size_t compiles = 0, corrupt = 0;
  for (const std::string &path : results) {
    auto got = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(got)) << path;
    EXPECT_EQ((*got)->getBuffer(), expected) << path;
    auto stats = llvm::MemoryBuffer::getFile(path + ".stats");
    ASSERT_TRUE(bool(stats)) << path;
    size_t c = 0, d = 0;
    ASSERT_EQ(std::sscanf((*stats)->getBufferStart(), "%zu %zu", &c, &d), 2);
    compiles += c;
    corrupt += d;
  }
  EXPECT_GE(compiles, kernels.size());  // the damaged entries were recompiled
  std::cout << "8 workers: " << compiles << " compiles, " << corrupt << " damaged entries seen\n";
}

} // namespace
