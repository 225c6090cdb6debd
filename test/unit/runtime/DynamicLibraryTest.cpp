//===- DynamicLibraryTest.cpp - opening one of several libraries ---------===//
#include "runtime/DynamicLibrary.h"

#include <gtest/gtest.h>

#include <cmath>
#include "compiler/support/LlvmError.h"

using namespace fusec;

namespace {

TEST(DynamicLibrary, OpensFirstLoadableCandidate) {
  auto library = DynamicLibrary::openFirst(
      {"/nonexistent/libfusec-missing.so", "libm.so.6"}, "the math library");
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());
  EXPECT_EQ(library->path(), "libm.so.6");
  auto cosine = reinterpret_cast<double (*)(double)>(library->lookup("cos"));
  ASSERT_NE(cosine, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
}

TEST(DynamicLibrary, MissingSymbolNamesSymbolAndLibrary) {
  auto library = DynamicLibrary::openFirst({"libm.so.6"}, "the math library");
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());
  EXPECT_EQ(library->lookup("fusec_no_such_symbol"), nullptr);
  auto symbol = library->require("fusec_no_such_symbol");
  ASSERT_FALSE(bool(symbol));
  std::string message = llvm::toString(symbol.takeError());
  EXPECT_NE(message.find("libm.so.6"), std::string::npos) << message;
  EXPECT_NE(message.find("'fusec_no_such_symbol'"), std::string::npos)
      << message;
}

TEST(DynamicLibrary, ErrorListsEveryCandidateWithItsReason) {
  auto library = DynamicLibrary::openFirst(
      {"libfusec-missing-a.so.1", "/nonexistent/dir/libfusec-missing-b.so"},
      "the test library");
  ASSERT_FALSE(bool(library));
  std::string message = llvm::toString(library.takeError());
  EXPECT_NE(message.find("the test library could not be loaded; tried:"),
            std::string::npos)
      << message;
  EXPECT_NE(
      message.find("\n  libfusec-missing-a.so.1: cannot open shared object"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("\n  /nonexistent/dir/libfusec-missing-b.so: cannot "
                         "open shared object file: No such file or directory"),
            std::string::npos)
      << message;
}

TEST(DynamicLibrary, SingleCandidateErrorIsOneLine) {
  auto library = DynamicLibrary::openFirst({"libfusec-missing.so.1"},
                                           "libfusec-missing.so.1");
  ASSERT_FALSE(bool(library));
  std::string message = llvm::toString(library.takeError());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(
      message.rfind("libfusec-missing.so.1 could not be loaded: "
                    "libfusec-missing.so.1: cannot open shared object file",
                    0),
      0u)
      << message;
}

TEST(DynamicLibrary, NoCandidates) {
  auto library = DynamicLibrary::openFirst({}, "nothing");
  ASSERT_FALSE(bool(library));
  EXPECT_EQ(llvm::toString(library.takeError()),
            "nothing could not be loaded: no candidate names were given");
}

} // namespace
