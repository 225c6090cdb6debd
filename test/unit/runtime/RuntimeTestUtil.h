//===- RuntimeTestUtil.h - shared helpers of the runtime unit tests ------===//
#pragma once

#include "runtime/Nvrtc.h"

#include <optional>
#include <string>
#include <vector>

namespace fusec::test {

/// A small elementwise kernel `name` (out[i] = a * x[i] + y[i]); `variant`
/// changes a constant, so each variant is a distinct source.
KernelSource axpyKernel(const std::string &name, const std::string &arch,
                        int variant = 0);

/// Four distinct small kernels for sm_80, as the worker processes compile.
std::vector<KernelSource> sampleKernels();

/// Skips the current test (from its body) when NVRTC cannot be loaded.
#define FUSEC_REQUIRE_NVRTC()                                                  \
  do {                                                                         \
    if (llvm::Error err = ::fusec::loadNvrtc())                                \
      GTEST_SKIP() << llvm::toString(std::move(err));                          \
  } while (false)

/// Sets (or, with std::nullopt, unsets) an environment variable for one
/// scope, restoring the previous state afterwards.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name;
  std::optional<std::string> saved;
};

/// A fresh directory under the system temp directory, removed with its
/// contents at the end of the scope.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return dir; }

private:
  std::string dir;
};

/// The whole file, or std::nullopt when it cannot be read.
std::optional<std::string> readFile(const std::string &path);

/// The names in `dir`, sorted.
std::vector<std::string> listDirectory(const std::string &dir);

/// Runs the kernel cache worker (see RuntimeTestMain.cpp); returns the exit
/// status for main().
int runKernelCacheWorker(const std::string &dir);
/// A worker that tolerates damaged entries (another process corrupts them):
/// every kernel must still compile or load, and it writes "name digest" of
/// each final cubin to `out`.
int runTolerantKernelCacheWorker(const std::string &dir, const std::string &out);
/// Damages the entries of `dir` (truncates, flips bytes, replaces, removes)
/// until it is killed.
int runKernelCacheCorruptor(const std::string &dir);

} // namespace fusec::test
