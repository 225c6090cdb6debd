//===- AtomicFileTest.cpp - writeFileAtomically ---------------------------===//
#include "compiler/support/AtomicFile.h"

#include "TempDir.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

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

// A symbolic link stays a link (what it points to gets the bytes), and a
// device or FIFO is written in place: renaming over it would replace it with
// a regular file (`-o /dev/null` run as root once replaced the device).
TEST(AtomicFileTest, LinksAndDevicesAreWrittenThroughNotReplaced) {
  TempDir tmp;
  tmp.write("target.txt", "old");
  ASSERT_EQ(::symlink("target.txt", tmp.path("link.txt").c_str()), 0);
  llvm::Error err = writeFileAtomically(tmp.path("link.txt"), "new");
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  struct stat st;
  ASSERT_EQ(::lstat(tmp.path("link.txt").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(tmp.read("target.txt"), "new");

  // A link to nothing yet creates what it names (as a shell's `>` does).
  ASSERT_EQ(::symlink("missing.txt", tmp.path("dangling").c_str()), 0);
  err = writeFileAtomically(tmp.path("dangling"), "x");
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  EXPECT_EQ(tmp.read("missing.txt"), "x");

  // A FIFO nobody reads is an error at once, not a wait without end.
  ASSERT_EQ(::mkfifo(tmp.path("fifo").c_str(), 0600), 0);
  llvm::Error fifo = writeFileAtomically(tmp.path("fifo"), "x");
  ASSERT_TRUE(bool(fifo));
  EXPECT_NE(llvm::toString(std::move(fifo)).find("no process is reading"), std::string::npos);

  // A regular file replaced keeps its permissions.
  tmp.write("private", "old");
  ASSERT_EQ(::chmod(tmp.path("private").c_str(), 0600), 0);
  err = writeFileAtomically(tmp.path("private"), "new");
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  ASSERT_EQ(::stat(tmp.path("private").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  err = writeFileAtomically("/dev/null", "discarded");
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

// The kernel cache's writes (replaceEntry) replace whatever holds the
// entry's name: a link planted in a shared cache directory is replaced by the
// entry, and what it named (anywhere on disk) is left alone.
TEST(AtomicFileTest, ReplacingAnEntryNeverWritesThroughALink) {
  TempDir tmp;
  tmp.write("victim.txt", "precious");
  ASSERT_EQ(::symlink("victim.txt", tmp.path("entry").c_str()), 0);
  llvm::Error err = writeFileAtomically(tmp.path("entry"), "cached", /*replaceEntry=*/true);
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  struct stat st;
  ASSERT_EQ(::lstat(tmp.path("entry").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(tmp.read("entry"), "cached");
  EXPECT_EQ(tmp.read("victim.txt"), "precious");

  // A dangling link creates nothing where it points.
  ASSERT_EQ(::symlink("planted.sh", tmp.path("entry2").c_str()), 0);
  err = writeFileAtomically(tmp.path("entry2"), "cached", /*replaceEntry=*/true);
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  EXPECT_NE(::access(tmp.path("planted.sh").c_str(), F_OK), 0);

  // A FIFO is replaced too, not written to.
  ASSERT_EQ(::mkfifo(tmp.path("entry3").c_str(), 0600), 0);
  err = writeFileAtomically(tmp.path("entry3"), "cached", /*replaceEntry=*/true);
  ASSERT_FALSE(err) << llvm::toString(std::move(err));
  ASSERT_EQ(::lstat(tmp.path("entry3").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

} // namespace
