//===- ReadFileTest.cpp - the bounded, non-mapped file reader --------------===//
#include "compiler/support/ReadFile.h"

#include "test/unit/TempDir.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>

using namespace fusec;
using fusec::testing::TempDir;

namespace {

std::string errorOf(llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> r) {
  if (r)
    return "";
  return llvm::toString(r.takeError());
}

TEST(ReadFile, ReadsARegularFileWhole) {
  TempDir dir;
  std::ofstream(dir.path("g.json")) << "{\"fusec\": 1}";
  auto r = readFileBounded(dir.path("g.json"), "graph", FileLimits::kGraph);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ((*r)->getBuffer(), "{\"fusec\": 1}");
}

TEST(ReadFile, MissingFileIsAMissNamedAsSuch) {
  TempDir dir;
  auto r = readFileBounded(dir.path("none.json"), "graph", FileLimits::kGraph);
  ASSERT_FALSE(bool(r));
  llvm::Error err = r.takeError();
  EXPECT_TRUE(isMissingFile(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            "cannot read graph '" + dir.path("none.json") + "': No such file or directory");
}

// A FIFO would block a plain open() until a writer comes: refused at once.
TEST(ReadFile, FifoDeviceAndDirectoryAreRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.path("fifo").c_str(), 0600), 0);
  EXPECT_EQ(errorOf(readFileBounded(dir.path("fifo"), "cache file", FileLimits::kCacheEntry)),
            "cannot read cache file '" + dir.path("fifo") +
                "': not a regular file (a FIFO, a device or a socket)");
  EXPECT_EQ(errorOf(readFileBounded("/dev/zero", "graph", FileLimits::kGraph)),
            "cannot read graph '/dev/zero': not a regular file (a FIFO, a device or a socket)");
  EXPECT_EQ(errorOf(readFileBounded(dir.dir(), "graph", FileLimits::kGraph)),
            "cannot read graph '" + dir.dir() + "': Is a directory");
}

TEST(ReadFile, FileOverItsLimitIsRefused) {
  TempDir dir;
  std::ofstream(dir.path("big")) << std::string(2048, 'x');
  EXPECT_EQ(errorOf(readFileBounded(dir.path("big"), "graph", 1024)),
            "cannot read graph '" + dir.path("big") +
                "': it holds 2048 bytes, more than the 1024 bytes a graph may hold");
  EXPECT_TRUE(bool(readFileBounded(dir.path("big"), "graph", 2048)));
}

TEST(ReadFile, SlicesAreCheckedAgainstTheFile) {
  TempDir dir;
  std::ofstream(dir.path("data")) << "0123456789";
  auto r = readFileSlice(dir.path("data"), "external data", 3, 4);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ((*r)->getBuffer(), "3456");
  EXPECT_EQ(errorOf(readFileSlice(dir.path("data"), "external data", 8, 4)),
            "cannot read external data '" + dir.path("data") +
                "': 4 bytes at offset 8 are past its end (10 bytes)");
}

// Names reach the terminal escaped.
TEST(ReadFile, PathsInMessagesArePrintable) {
  TempDir dir;
  std::string odd = dir.path("a\nb");
  std::string msg = errorOf(readFileBounded(odd, "graph", FileLimits::kGraph));
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

} // namespace
