//===- RuntimeTestMain.cpp - main() of fusec-runtime-tests ---------------===//
//
// `fusec-runtime-tests --kernel-cache-worker DIR` (and the tolerant worker
// and the corruptor) is not a test run: it is one of the processes
// KernelCacheConcurrencyTest starts to share a cache directory. Anything
// else goes to GoogleTest.
//
//===----------------------------------------------------------------------===//
#include "test/unit/runtime/RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "--kernel-cache-worker") == 0)
    return fusec::test::runKernelCacheWorker(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "--kernel-cache-tolerant-worker") == 0)
    return fusec::test::runTolerantKernelCacheWorker(argv[2], argv[3]);
  if (argc == 3 && std::strcmp(argv[1], "--kernel-cache-corruptor") == 0)
    return fusec::test::runKernelCacheCorruptor(argv[2]);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
