//===- AtomicFileTest.cpp - writeFileAtomically ---------------------------===//
#include "compiler/support/AtomicFile.h"

#include "TempDir.h"

#include <gtest/gtest.h>

using namespace fusec;
using fusec::testing::TempDir;

namespace {

TEST(AtomicFileTest, WritesANewFileAndLeavesNoTemporary) {
  TempDir tmp;
  llvm::Error err = writeFileAtomically(tmp.path("out.bin"), llvm::StringRef("hello\0world", 11));
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  EXPECT_EQ(tmp.read("out.bin"), std::string("hello\0world", 11));
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFileTest, ReplacesAnExistingFile) {
  TempDir tmp;
  tmp.write("out.bin", "old contents that are longer");
  llvm::Error err = writeFileAtomically(tmp.path("out.bin"), "new");
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  EXPECT_EQ(tmp.read("out.bin"), "new");
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFileTest, WritesAnEmptyFile) {
  TempDir tmp;
  llvm::Error err = writeFileAtomically(tmp.path("empty"), "");
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  EXPECT_EQ(tmp.read("empty"), "");
}

TEST(AtomicFileTest, FailedRenameKeepsTheTargetAndRemovesTheTemporary) {
  TempDir tmp;
  // A non-empty directory cannot be replaced by a file: rename fails after
  // the temporary has been written and synced.
  ASSERT_FALSE(llvm::sys::fs::create_directory(tmp.path("target")));
  tmp.write("target/keep.txt", "precious");
  std::string target = tmp.path("target");
  llvm::Error err = writeFileAtomically(target, "data");
  ASSERT_TRUE(static_cast<bool>(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("cannot write '" + target + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("rename failed: Is a directory"), std::string::npos) << message;
  EXPECT_EQ(tmp.read("target/keep.txt"), "precious");
  EXPECT_EQ(tmp.entries(), std::vector<std::string>{"target"});
}

TEST(AtomicFileTest, MissingDirectoryIsReported) {
  TempDir tmp;
  std::string target = tmp.path("no/such/dir/out.bin");
  llvm::Error err = writeFileAtomically(target, "data");
  ASSERT_TRUE(static_cast<bool>(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("cannot write '" + target + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  EXPECT_TRUE(tmp.entries().empty());
}

} // namespace
