//===- TempDir.h - a scratch directory per test ---------------------------===//
#pragma once

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace fusec::testing {

/// A fresh directory, removed with its contents when the object goes.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> dir;
    std::error_code ec = llvm::sys::fs::createUniqueDirectory("fusec-unit", dir);
    EXPECT_FALSE(ec) << ec.message();
    root = std::string(dir);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(root); }

  std::string path(const std::string &name) const { return root + "/" + name; }
  const std::string &dir() const { return root; }

  /// Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
         it.increment(ec))
      names.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(names.begin(), names.end());
    return names;
  }

  void write(const std::string &name, const std::string &bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out << bytes;
  }

  std::string read(const std::string &name) const {
    auto buffer = llvm::MemoryBuffer::getFile(path(name), /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    return buffer ? (*buffer)->getBuffer().str() : std::string("<unreadable>");
  }

private:
  std::string root;
};

} // namespace fusec::testing
