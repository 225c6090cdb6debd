//===- TuningCacheTest.cpp - the GEMM tuning file -------------------------===//
#include "runtime/TuningCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

std::string tempPath(const char *name) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("fusec-tuning", dir));
  llvm::sys::path::append(dir, "sub", name);  // save() creates "sub"
  return dir.str().str();
}

TEST(TuningCache, MissingFileIsEmpty) {
  std::string warning;
  TuningCache c = TuningCache::load(tempPath("gemm-tuning.json"), &warning);
  EXPECT_TRUE(c.entries().empty());
  EXPECT_TRUE(warning.empty());
}

TEST(TuningCache, SavedEntriesLoadBack) {
  std::string path = tempPath("gemm-tuning.json");
  TuningCache c = TuningCache::load(path);
  c.set("sm_90a bf16 m4096 n11008 k4096 b1 aK bK", {"128x256x32 w64x64 s3 k1", 512.5});
  c.set("sm_80 f16 m1 n4096 k4096 b1 aK bK", {"16x64x64 w16x16 s4 k2", 20});
  ASSERT_FALSE(bool(c.save()));
  TuningCache d = TuningCache::load(path);
  ASSERT_EQ(d.entries().size(), 2u);
  EXPECT_EQ(d.entries().at("sm_90a bf16 m4096 n11008 k4096 b1 aK bK").config,
            "128x256x32 w64x64 s3 k1");
  EXPECT_DOUBLE_EQ(d.entries().at("sm_90a bf16 m4096 n11008 k4096 b1 aK bK").us, 512.5);
}

TEST(TuningCache, DamagedFileIsIgnoredWithAWarning) {
  std::string path = tempPath("gemm-tuning.json");
  ASSERT_FALSE(llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "{\"entries\": [1, 2";  // truncated
  }
  std::string warning;
  TuningCache c = TuningCache::load(path, &warning);
  EXPECT_TRUE(c.entries().empty());
  EXPECT_NE(warning.find("damaged"), std::string::npos) << warning;
  EXPECT_NE(warning.find(path), std::string::npos) << warning;
  // The next save replaces it with a valid file.
  c.set("k", {"128x128x32 w64x32 s4 k1", 1});
  ASSERT_FALSE(bool(c.save()));
  EXPECT_EQ(TuningCache::load(path).entries().size(), 1u);
}

} // namespace
