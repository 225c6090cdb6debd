//===- RuntimeTestUtil.cpp - shared helpers of the runtime unit tests ----===//
#include "test/unit/runtime/RuntimeTestUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdlib>

namespace fusec::test {

KernelSource axpyKernel(const std::string &name, const std::string &arch,
                        int variant) {
  KernelSource kernel;
  kernel.name = name;
  kernel.arch = arch;
  kernel.source =
      "extern \"C\" __global__ void " + name +
      "(float a, const float *x, const float *y, float *out, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n)\n"
      "    out[i] = a * x[i] + y[i] + " +
      std::to_string(variant) +
      ".0f;\n"
      "}\n";
  return kernel;
}

std::vector<KernelSource> sampleKernels() {
  std::vector<KernelSource> kernels;
  for (int i = 0; i < 4; ++i)
    kernels.push_back(axpyKernel("sample" + std::to_string(i), "sm_80", i));
  return kernels;
}

ScopedEnv::ScopedEnv(const char *name, std::optional<std::string> value)
    : name(name) {
  if (const char *old = std::getenv(name))
    saved = old;
  if (value)
    ::setenv(name, value->c_str(), /*overwrite=*/1);
  else
    ::unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (saved)
    ::setenv(name.c_str(), saved->c_str(), 1);
  else
    ::unsetenv(name.c_str());
}

TempDir::TempDir() {
  llvm::SmallString<128> path;
  if (!llvm::sys::fs::createUniqueDirectory("fusec-runtime-test", path))
    dir = path.str().str();
}

TempDir::~TempDir() {
  if (!dir.empty())
    (void)llvm::sys::fs::remove_directories(dir);
}

std::optional<std::string> readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

std::vector<std::string> listDirectory(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace fusec::test
