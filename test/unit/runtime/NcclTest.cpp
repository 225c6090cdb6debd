//===- NcclTest.cpp - loading NCCL; what needs no GPU ---------------------===//
//
// A split program's collectives run on NCCL, opened at run time. Where the
// library is installed (the CUDA toolkit's lib64 has it), it loads, says its
// version, and makes unique ids, none of which needs a GPU; the collectives
// themselves are tested on GPUs (ctest label multigpu). Without the library
// the tests skip, saying why.
//
//===----------------------------------------------------------------------===//
#include "runtime/Nccl.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

Nccl *ncclOrSkip(std::string &why) {
  auto nccl = Nccl::get();
  if (nccl)
    return *nccl;
  why = nccl.takeError().message();
  return nullptr;
}

TEST(Nccl, LoadsAndSaysItsVersion) {
  std::string why;
  Nccl *nccl = ncclOrSkip(why);
  if (!nccl) {
    // The error names what was looked for.
    EXPECT_NE(why.find("libnccl.so.2"), std::string::npos) << why;
    GTEST_SKIP() << why;
  }
  EXPECT_GE(nccl->version(), 21000);
  EXPECT_FALSE(nccl->path().empty());
  // Loaded once: the same instance every time.
  auto again = Nccl::get();
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(*again, nccl);
}

TEST(Nccl, UniqueIdsDiffer) {
  std::string why;
  Nccl *nccl = ncclOrSkip(why);
  if (!nccl)
    GTEST_SKIP() << why;
  auto a = nccl->uniqueId();
  if (!a)  // NCCL's bootstrap needs a network interface, which a sandbox may lack
    GTEST_SKIP() << a.takeError().message();
  auto b = nccl->uniqueId();
  ASSERT_TRUE(bool(b)) << b.takeError().message();
  EXPECT_NE(a->bytes, b->bytes);
  EXPECT_NE(a->bytes, NcclId().bytes);
}

TEST(Nccl, ARankOutsideItsGroupIsRefusedBeforeNcclIsAsked) {
  std::string why;
  Nccl *nccl = ncclOrSkip(why);
  if (!nccl)
    GTEST_SKIP() << why;
  auto comm = nccl->communicator(NcclId(), 2, 2);
  ASSERT_FALSE(bool(comm));
  EXPECT_NE(comm.takeError().message().find("rank 2 of 2 ranks"), std::string::npos);
}

} // namespace
