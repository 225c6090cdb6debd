//===- FuzzCacheFile.cpp - libFuzzer target: the cache's JSON files --------===//
//
// Any bytes as the GEMM tuning cache and the device measurements file (the
// files several processes share in the cache directory): read through the
// same loaders as a compile, from a file.
//
//===----------------------------------------------------------------------===//
#include "runtime/DeviceMeasurements.h"
#include "runtime/TuningCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static std::string path = [] {
    llvm::SmallString<128> p;
    llvm::sys::fs::createTemporaryFile("fusec-fuzz-cache", "json", p);
    return std::string(p);
  }();
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec)
      return 0;
    out.write(reinterpret_cast<const char *>(data), size);
  }
  std::string warning;
  fusec::TuningCache cache = fusec::TuningCache::load(path, &warning);
  (void)cache;
  (void)fusec::loadMeasuredDevice(path, "h100");
  return 0;
}
