//===- KernelCacheTest.cpp - memory and disk kernel cache ----------------===//
#include "runtime/KernelCache.h"

#include "test/unit/runtime/RuntimeTestUtil.h"

#include "compiler/support/AtomicFile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace fusec;
using namespace fusec::test;

namespace {

/// Records every message the cache gives.
struct LogRecorder {
  std::vector<std::pair<CacheLogLevel, std::string>> messages;

  std::function<void(CacheLogLevel, llvm::StringRef)> sink() {
    return [this](CacheLogLevel level, llvm::StringRef message) {
      messages.emplace_back(level, message.str());
    };
  }
  size_t count(CacheLogLevel level) const {
    size_t n = 0;
    for (const auto &[l, m] : messages)
      n += l == level;
    return n;
  }
};

CacheOptions diskOptions(const std::string &dir, LogRecorder *log = nullptr) {
  CacheOptions options;
  options.directory = dir;
  if (log)
    options.log = log->sink();
  return options;
}

TEST(KernelCache, MissThenMemoryHit) {
  FUSEC_REQUIRE_NVRTC();
  KernelCache cache{CacheOptions()};
  EXPECT_EQ(cache.directory(), std::nullopt);
  KernelSource kernel = axpyKernel("axpy", "sm_80");
  auto first = cache.getOrCompile(kernel);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  auto second = cache.getOrCompile(kernel);
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(first->get(), second->get()); // the very same object
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.memoryHits, 1u);
  EXPECT_EQ(stats.diskHits, 0u);
  EXPECT_EQ(stats.diskWrites, 0u);
}

TEST(KernelCache, FreshInstanceHitsDisk) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  KernelSource kernel = axpyKernel("axpy", "sm_80");
  std::string cubin;
  {
    KernelCache cache(diskOptions(dir.path()));
    auto compiled = cache.getOrCompile(kernel);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    cubin = (*compiled)->cubin;
    EXPECT_EQ(cache.stats().diskWrites, 1u);
  }
  KernelCache cache(diskOptions(dir.path()));
  auto loaded = cache.getOrCompile(kernel);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ((*loaded)->cubin, cubin);
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.diskHits, 1u);
  EXPECT_EQ(stats.compiles, 0u);
  EXPECT_EQ(stats.corruptEntries, 0u);
  // One entry, named by its key, and no temporary files left behind.
  EXPECT_EQ(listDirectory(dir.path()),
            std::vector<std::string>{cache.keyFor(kernel) + ".cubin"});
  EXPECT_EQ(cache.entryPath(kernel),
            dir.path() + "/" + cache.keyFor(kernel) + ".cubin");
}

TEST(KernelCache, PtxAndLogSurviveTheDisk) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  KernelSource kernel = axpyKernel("warned", "sm_90a");
  kernel.source += "__device__ int unusedHelper() { int unused; return 0; }\n";
  kernel.emitPtx = true;
  std::string ptx, log;
  {
    KernelCache cache(diskOptions(dir.path()));
    auto compiled = cache.getOrCompile(kernel);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    ptx = (*compiled)->ptx;
    log = (*compiled)->log;
  }
  ASSERT_FALSE(log.empty());
  KernelCache cache(diskOptions(dir.path()));
  auto loaded = cache.getOrCompile(kernel);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(cache.stats().diskHits, 1u);
  EXPECT_EQ((*loaded)->ptx, ptx);
  EXPECT_TRUE((*loaded)->cubin.empty());
  EXPECT_EQ((*loaded)->log, log);
}

TEST(KernelCache, KeyCoversEverythingThatChangesTheOutput) {
  KernelCache cache{CacheOptions()};
  KernelSource base = axpyKernel("axpy", "sm_80");
  std::string key = cache.keyFor(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(cache.keyFor(base), key); // deterministic

  KernelSource renamed = base;
  renamed.name = "other_name"; // the name does not reach the cubin
  EXPECT_EQ(cache.keyFor(renamed), key);

  KernelSource changed = base;
  changed.source += "\n";
  EXPECT_NE(cache.keyFor(changed), key);
  changed = base;
  changed.arch = "sm_86";
  EXPECT_NE(cache.keyFor(changed), key);
  changed = base;
  changed.options = {"--use_fast_math"};
  EXPECT_NE(cache.keyFor(changed), key);
  changed = base;
  changed.emitPtx = true;
  EXPECT_NE(cache.keyFor(changed), key);
}

/// Ways an entry can be damaged; each must be noticed and recompiled.
enum class Damage {
  FlipPayloadByte,
  FlipHeaderByte,
  Truncate,
  TruncateHeader,
  WrongMagic,
  Empty,
  AppendGarbage,
  OtherKernelsEntry
};

class KernelCacheDamage : public ::testing::TestWithParam<Damage> {};

/// Applies `damage` to the entry at `path`; `other` is a valid entry of a
/// different kernel.
void damageEntry(const std::string &path, Damage damage,
                 const std::string &other) {
  std::optional<std::string> bytes = readFile(path);
  ASSERT_TRUE(bytes.has_value());
  ASSERT_GT(bytes->size(), 200u);
  switch (damage) {
  case Damage::FlipPayloadByte:
    (*bytes)[bytes->size() / 2] ^= 0x01;
    break;
  case Damage::FlipHeaderByte:
    (*bytes)[20] ^= 0x80; // inside the key
    break;
  case Damage::Truncate:
    bytes->resize(bytes->size() - 100);
    break;
  case Damage::TruncateHeader:
    bytes->resize(40);
    break;
  case Damage::WrongMagic:
    (*bytes)[0] = 'X';
    break;
  case Damage::Empty:
    bytes->clear();
    break;
  case Damage::AppendGarbage:
    *bytes += "garbage";
    break;
  case Damage::OtherKernelsEntry:
    *bytes = other;
    break;
  }
  ASSERT_FALSE(bool(writeFileAtomically(path, *bytes)));
}

TEST_P(KernelCacheDamage, EntryIsRecompiledAndCounted) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  KernelSource kernel = axpyKernel("axpy", "sm_80");
  KernelSource otherKernel = axpyKernel("axpy", "sm_80", /*variant=*/7);
  std::string cubin, path;
  {
    KernelCache cache(diskOptions(dir.path()));
    auto compiled = cache.getOrCompile(kernel);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    ASSERT_TRUE(bool(cache.getOrCompile(otherKernel)));
    cubin = (*compiled)->cubin;
    path = *cache.entryPath(kernel);
  }
  std::optional<std::string> other =
      readFile(*KernelCache(diskOptions(dir.path())).entryPath(otherKernel));
  ASSERT_TRUE(other.has_value());
  damageEntry(path, GetParam(), *other);

  LogRecorder log;
  KernelCache cache(diskOptions(dir.path(), &log));
  auto recompiled = cache.getOrCompile(kernel);
  ASSERT_TRUE(bool(recompiled)) << llvm::toString(recompiled.takeError());
  EXPECT_EQ((*recompiled)->cubin, cubin);
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.corruptEntries, 1u);
  EXPECT_EQ(stats.compiles, 1u);
  EXPECT_EQ(stats.diskHits, 0u);
  ASSERT_EQ(log.messages.size(), 1u);
  EXPECT_EQ(log.messages[0].first, CacheLogLevel::Debug);
  EXPECT_TRUE(llvm::StringRef(log.messages[0].second)
                  .starts_with("discarded damaged kernel cache entry " + path))
      << log.messages[0].second;

  // The entry was rewritten whole: the next process finds it on disk.
  KernelCache next(diskOptions(dir.path()));
  ASSERT_TRUE(bool(next.getOrCompile(kernel)));
  EXPECT_EQ(next.stats().diskHits, 1u);
  EXPECT_EQ(next.stats().corruptEntries, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    AllDamages, KernelCacheDamage,
    ::testing::Values(Damage::FlipPayloadByte, Damage::FlipHeaderByte,
                      Damage::Truncate, Damage::TruncateHeader,
                      Damage::WrongMagic, Damage::Empty, Damage::AppendGarbage,
                      Damage::OtherKernelsEntry));

TEST(KernelCache, EachDamagedEntryIsReportedOnce) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  KernelSource first = axpyKernel("axpy", "sm_80", 0);
  KernelSource second = axpyKernel("axpy", "sm_80", 1);
  KernelCache writer(diskOptions(dir.path()));
  ASSERT_TRUE(bool(writer.getOrCompile(first)));
  ASSERT_TRUE(bool(writer.getOrCompile(second)));
  ASSERT_FALSE(bool(writeFileAtomically(*writer.entryPath(first), "junk")));
  ASSERT_FALSE(bool(writeFileAtomically(*writer.entryPath(second), "junk")));

  LogRecorder log;
  KernelCache cache(diskOptions(dir.path(), &log));
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(bool(cache.getOrCompile(first)));
    ASSERT_TRUE(bool(cache.getOrCompile(second)));
  }
  EXPECT_EQ(cache.stats().corruptEntries, 2u);
  EXPECT_EQ(cache.stats().compiles, 2u);
  EXPECT_EQ(cache.stats().memoryHits, 2u);
  EXPECT_EQ(log.count(CacheLogLevel::Debug), 2u);
  EXPECT_EQ(log.count(CacheLogLevel::Warning), 0u);
}

// A FIFO in an entry's place is not waited on: it is discarded as a damaged
// entry, the kernel compiled, and the entry written again.
TEST(KernelCache, FifoInPlaceOfAnEntryIsDiscarded) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  KernelSource kernel = axpyKernel("axpy", "sm_80", 0);
  KernelCache writer(diskOptions(dir.path()));
  ASSERT_TRUE(bool(writer.getOrCompile(kernel)));
  const std::string entry = *writer.entryPath(kernel);
  ASSERT_EQ(::unlink(entry.c_str()), 0);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  LogRecorder log;
  KernelCache cache(diskOptions(dir.path(), &log));
  ASSERT_TRUE(bool(cache.getOrCompile(kernel)));
  EXPECT_EQ(cache.stats().corruptEntries, 1u);
  EXPECT_EQ(cache.stats().compiles, 1u);
  struct stat st;
  ASSERT_EQ(::stat(entry.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));  // written again as a file
}

TEST(KernelCache, CompileErrorsAreReturnedAndNotCached) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(diskOptions(dir.path()));
  KernelSource kernel = axpyKernel("axpy", "sm_80");
  kernel.source += "syntax error here\n";
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto compiled = cache.getOrCompile(kernel);
    ASSERT_FALSE(bool(compiled));
    EXPECT_TRUE(llvm::StringRef(llvm::toString(compiled.takeError()))
                    .contains("NVRTC failed to compile kernel 'axpy'"));
  }
  EXPECT_EQ(cache.stats().compiles, 2u);
  EXPECT_EQ(cache.stats().diskWrites, 0u);
  EXPECT_TRUE(listDirectory(dir.path()).empty());
}

TEST(KernelCache, GetOrCompileAllKeepsOrderAndCompilesDuplicatesOnce) {
  FUSEC_REQUIRE_NVRTC();
  std::vector<KernelSource> kernels;
  for (int i = 0; i < 6; ++i) {
    KernelSource kernel = axpyKernel("k" + std::to_string(i), "sm_80", i);
    kernel.emitPtx = true; // PTX names its entry, so results can be matched
    kernels.push_back(kernel);
  }
  kernels.push_back(kernels[2]); // a duplicate
  KernelSource broken = axpyKernel("broken", "sm_80");
  broken.source += "not C++\n";
  kernels.push_back(broken);

  KernelCache cache{CacheOptions()};
  std::vector<KernelCache::Result> results = cache.getOrCompileAll(kernels, 4);
  ASSERT_EQ(results.size(), kernels.size());
  for (size_t i = 0; i + 1 < kernels.size(); ++i) {
    ASSERT_TRUE(bool(results[i]))
        << i << ": " << llvm::toString(results[i].takeError());
    EXPECT_TRUE(llvm::StringRef((*results[i])->ptx)
                    .contains(".entry " + kernels[i].name + "("))
        << i;
  }
  ASSERT_FALSE(bool(results.back()));
  EXPECT_TRUE(llvm::StringRef(llvm::toString(results.back().takeError()))
                  .contains("kernel 'broken'"));
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.compiles, 7u); // six distinct good kernels and the broken one
  EXPECT_EQ(stats.memoryHits, 1u);
}

TEST(KernelCache, GetOrCompileAllWithNoKernelsOrOneThread) {
  KernelCache cache{CacheOptions()};
  EXPECT_TRUE(cache.getOrCompileAll({}, 0).empty());
  FUSEC_REQUIRE_NVRTC();
  auto results = cache.getOrCompileAll({axpyKernel("a", "sm_80")}, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(bool(results[0])) << llvm::toString(results[0].takeError());
}

TEST(KernelCache, DirectoryFromEnvironment) {
  ScopedEnv xdg("XDG_CACHE_HOME", std::string("/xdg/cache"));
  ScopedEnv home("HOME", std::string("/home/someone"));
  for (const char *off : {"off", "none", "OFF"}) {
    ScopedEnv dir("FUSEC_CACHE_DIR", std::string(off));
    EXPECT_EQ(cacheDirectory(), std::nullopt) << off;
    EXPECT_EQ(CacheOptions::fromEnvironment().directory, std::nullopt);
  }
  {
    ScopedEnv dir("FUSEC_CACHE_DIR", std::string("/custom/kernels"));
    EXPECT_EQ(cacheDirectory(), std::string("/custom/kernels"));
  }
  ScopedEnv dir("FUSEC_CACHE_DIR", std::nullopt);
  EXPECT_EQ(cacheDirectory(), std::string("/xdg/cache/fusec/kernels"));
  {
    ScopedEnv relative("XDG_CACHE_HOME", std::string("relative/cache"));
    EXPECT_EQ(cacheDirectory(),
              std::string("/home/someone/.cache/fusec/kernels"));
  }
  ScopedEnv noXdg("XDG_CACHE_HOME", std::nullopt);
  EXPECT_EQ(cacheDirectory(),
            std::string("/home/someone/.cache/fusec/kernels"));
}

TEST(KernelCache, DisabledDiskCacheWritesNothing) {
  FUSEC_REQUIRE_NVRTC();
  TempDir home;
  ScopedEnv homeEnv("HOME", home.path());
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv off("FUSEC_CACHE_DIR", std::string("off"));
  KernelCache cache(CacheOptions::fromEnvironment());
  EXPECT_EQ(cache.directory(), std::nullopt);
  EXPECT_EQ(cache.entryPath(axpyKernel("axpy", "sm_80")), std::nullopt);
  ASSERT_TRUE(bool(cache.getOrCompile(axpyKernel("axpy", "sm_80"))));
  ASSERT_TRUE(bool(cache.getOrCompile(axpyKernel("axpy", "sm_80"))));
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().memoryHits, 1u);
  EXPECT_EQ(cache.stats().diskWrites, 0u);
  EXPECT_TRUE(listDirectory(home.path()).empty());
}

TEST(KernelCache, UnwritableDirectoryWarnsOnceAndKeepsWorking) {
  FUSEC_REQUIRE_NVRTC();
  TempDir dir;
  // A directory below a regular file can never be created, even by root.
  std::string blocker = dir.path() + "/not-a-directory";
  ASSERT_FALSE(bool(writeFileAtomically(blocker, "x")));
  LogRecorder log;
  KernelCache cache(diskOptions(blocker + "/kernels", &log));
  for (int i = 0; i < 3; ++i) {
    auto compiled = cache.getOrCompile(axpyKernel("axpy", "sm_80", i));
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  }
  ASSERT_TRUE(bool(cache.getOrCompile(axpyKernel("axpy", "sm_80", 0))));
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.compiles, 3u);
  EXPECT_EQ(stats.memoryHits, 1u);
  EXPECT_EQ(stats.diskWrites, 0u);
  ASSERT_EQ(log.messages.size(), 1u) << log.messages.back().second;
  EXPECT_EQ(log.messages[0].first, CacheLogLevel::Warning);
  EXPECT_TRUE(llvm::StringRef(log.messages[0].second)
                  .starts_with("the kernel cache directory '" + blocker +
                               "/kernels' cannot be written ("))
      << log.messages[0].second;
  EXPECT_TRUE(
      llvm::StringRef(log.messages[0].second).contains("in memory only"));
}

TEST(KernelCache, ReadOnlyDirectoryWarnsOnce) {
  FUSEC_REQUIRE_NVRTC();
  if (::geteuid() == 0)
    GTEST_SKIP() << "permissions do not bind root";
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0555), 0);
  LogRecorder log;
  KernelCache cache(diskOptions(dir.path(), &log));
  ASSERT_TRUE(bool(cache.getOrCompile(axpyKernel("axpy", "sm_80", 0))));
  ASSERT_TRUE(bool(cache.getOrCompile(axpyKernel("axpy", "sm_80", 1))));
  ::chmod(dir.path().c_str(), 0755);
  EXPECT_EQ(log.count(CacheLogLevel::Warning), 1u);
  EXPECT_EQ(cache.stats().diskWrites, 0u);
}

} // namespace
