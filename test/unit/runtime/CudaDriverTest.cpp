//===- CudaDriverTest.cpp - the driver's failures, without a GPU ---------===//
//
// These tests run anywhere. Those about a missing driver check the message
// users see; on a machine that has a driver they skip, since the GPU's own
// behaviour is tested by the `gpu` suite, not here.
//
//===----------------------------------------------------------------------===//
#include "runtime/CudaDriver.h"

#include "test/unit/runtime/RuntimeTestUtil.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include "compiler/support/LlvmError.h"

using namespace fusec;
using fusec::test::ScopedEnv;

namespace {

bool systemHasDriver() {
  void *handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return handle != nullptr; // left open: the driver dislikes being unloaded
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(CudaDriver, MissingLibraryIsReportedPlainly) {
  auto driver = CudaDriver::load({"/nonexistent/libcuda.so.1"});
  ASSERT_FALSE(bool(driver));
  std::string message = llvm::toString(driver.takeError());
  EXPECT_EQ(message.rfind("no NVIDIA driver found (/nonexistent/libcuda.so.1 "
                          "could not be loaded: ",
                          0),
            0u)
      << message;
  EXPECT_TRUE(contains(message, "No such file or directory")) << message;
  EXPECT_TRUE(contains(message, "; running kernels (`fusec run`, `fusec bench`, the API's "
                                "Program::run) needs a GPU, while `fusec compile`, `fusec "
                                "explain` and `fusec eval` work without one"))
      << message;
}

TEST(CudaDriver, GetWithoutDriverSaysSoAndKeepsSaying) {
  if (systemHasDriver())
    GTEST_SKIP() << "libcuda.so.1 is present on this machine";
  auto first = CudaDriver::get();
  ASSERT_FALSE(bool(first));
  std::string message = llvm::toString(first.takeError());
  EXPECT_EQ(
      message.rfind("no NVIDIA driver found (libcuda.so.1 could not be "
                    "loaded: libcuda.so.1: cannot open shared object file",
                    0),
      0u)
      << message;
  EXPECT_TRUE(contains(message, "`fusec bench`, the API's Program::run) needs a GPU")) << message;

  // The failure is cached: the same words, without loading again.
  auto second = CudaDriver::get();
  ASSERT_FALSE(bool(second));
  EXPECT_EQ(llvm::toString(second.takeError()), message);

  // Everything built on the driver passes the same message on.
  auto device = queryDevice(0);
  ASSERT_FALSE(bool(device));
  EXPECT_EQ(llvm::toString(device.takeError()), message);
  auto context = GpuContext::create();
  ASSERT_FALSE(bool(context));
  EXPECT_EQ(llvm::toString(context.takeError()), message);
}

TEST(CudaDriver, StubLibraryIsNotMistakenForADriver) {
  // The toolkit's stub defines every entry point (so resolution must find
  // each versioned name), but cuInit refuses to work.
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!llvm::sys::fs::exists(stub))
    GTEST_SKIP() << stub << " is not installed";
  auto driver = CudaDriver::load({stub});
  ASSERT_FALSE(bool(driver));
  std::string message = llvm::toString(driver.takeError());
  EXPECT_EQ(message, "no NVIDIA driver found (" + stub +
                         " is the CUDA toolkit's stub library, not a driver); "
                         "running kernels (`fusec run`, `fusec bench`, the API's "
                         "Program::run) needs a GPU, while `fusec compile`, `fusec explain` "
                         "and `fusec eval` work without one");
}

TEST(CudaDriver, SelectedDeviceOrdinal) {
  {
    ScopedEnv env("FUSEC_DEVICE", std::nullopt);
    auto ordinal = selectedDeviceOrdinal();
    ASSERT_TRUE(bool(ordinal));
    EXPECT_EQ(*ordinal, 0);
  }
  {
    ScopedEnv env("FUSEC_DEVICE", std::string("3"));
    auto ordinal = selectedDeviceOrdinal();
    ASSERT_TRUE(bool(ordinal));
    EXPECT_EQ(*ordinal, 3);
  }
  for (const char *bad : {"gpu1", "-1", "1.5"}) {
    ScopedEnv env("FUSEC_DEVICE", std::string(bad));
    auto ordinal = selectedDeviceOrdinal();
    ASSERT_FALSE(bool(ordinal)) << bad;
    EXPECT_EQ(llvm::toString(ordinal.takeError()),
              "FUSEC_DEVICE='" + std::string(bad) +
                  "' is not a device ordinal (0, 1, ...)");
  }
}

TEST(CudaDriver, NvrtcArchitectureOfDevice) {
  DeviceInfo info;
  info.ccMajor = 8;
  info.ccMinor = 0;
  EXPECT_EQ(info.nvrtcArch(), "sm_80");
  info.ccMinor = 6;
  EXPECT_EQ(info.nvrtcArch(), "sm_86");
  info.ccMajor = 9;
  info.ccMinor = 0;
  EXPECT_EQ(info.nvrtcArch(), "sm_90a");
  info.ccMajor = 10;
  EXPECT_EQ(info.nvrtcArch(), "sm_100a");
}

// Which targets' cubins a device runs: its major version and a minor at most
// its own, or an architecture-specific target ("a") exactly.
TEST(CudaDriver, ArchitecturesADeviceRuns) {
  DeviceInfo a100, l40s, h100;
  a100.ccMajor = 8, a100.ccMinor = 0;
  l40s.ccMajor = 8, l40s.ccMinor = 9;
  h100.ccMajor = 9, h100.ccMinor = 0;
  EXPECT_TRUE(a100.runs("sm_80"));
  EXPECT_FALSE(a100.runs("sm_86"));
  EXPECT_FALSE(a100.runs("sm_90a"));
  EXPECT_TRUE(l40s.runs("sm_80"));
  EXPECT_TRUE(l40s.runs("sm_89"));
  EXPECT_TRUE(h100.runs("sm_90a"));
  EXPECT_TRUE(h100.runs("sm_90"));
  EXPECT_FALSE(h100.runs("sm_80"));
  EXPECT_FALSE(h100.runs("sm_100a"));
  for (const char *bad : {"", "sm_", "sm_9", "compute_90", "sm_9x", "sm_90b"})
    EXPECT_FALSE(h100.runs(bad)) << bad;
}

} // namespace
