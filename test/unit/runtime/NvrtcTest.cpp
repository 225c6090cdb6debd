//===- NvrtcTest.cpp - compiling generated CUDA C++ with NVRTC -----------===//
#include "runtime/Nvrtc.h"

#include "test/unit/runtime/RuntimeTestUtil.h"

#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <thread>

using namespace fusec;
using fusec::test::axpyKernel;

namespace {

bool contains(llvm::StringRef text, llvm::StringRef part) {
  return text.contains(part);
}

bool isElf(const std::string &bytes) {
  return llvm::StringRef(bytes).starts_with("\x7f"
                                            "ELF");
}

/// Uses `setmaxnreg`, which exists only on sm_90a: compiling it for any other
/// architecture fails in ptxas, so success proves the flag reached NVRTC.
KernelSource hopperKernel(const std::string &arch) {
  KernelSource kernel;
  kernel.name = "hopper_only";
  kernel.arch = arch;
  kernel.source = R"(extern "C" __global__ void __launch_bounds__(128)
hopper_only(float *out) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  out[threadIdx.x] = 1.0f;
}
)";
  return kernel;
}

TEST(Nvrtc, VersionIsMajorThousandsPlusMinorTens) {
  FUSEC_REQUIRE_NVRTC();
  int version = nvrtcVersion();
  EXPECT_GE(version, 12000);
  EXPECT_EQ(version % 10, 0);
}

TEST(Nvrtc, CompilesCubinForSm80) {
  FUSEC_REQUIRE_NVRTC();
  auto compiled = compile(axpyKernel("axpy", "sm_80"));
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_TRUE(isElf(compiled->cubin));
  EXPECT_TRUE(compiled->ptx.empty());
  EXPECT_EQ(&compiled->image(), &compiled->cubin);
}

TEST(Nvrtc, CompilesHopperOnlyFeatureForSm90a) {
  FUSEC_REQUIRE_NVRTC();
  auto compiled = compile(hopperKernel("sm_90a"));
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_TRUE(isElf(compiled->cubin));

  // The same source is rejected for Ampere and for plain sm_90.
  for (const char *arch : {"sm_80", "sm_90"}) {
    auto rejected = compile(hopperKernel(arch));
    ASSERT_FALSE(bool(rejected)) << arch;
    std::string message = llvm::toString(rejected.takeError());
    EXPECT_TRUE(
        contains(message, "kernel 'hopper_only' for " + std::string(arch)))
        << message;
    EXPECT_TRUE(contains(message, "setmaxnreg")) << message;
  }
}

TEST(Nvrtc, EmitsPtxForTheVirtualArchitecture) {
  FUSEC_REQUIRE_NVRTC();
  KernelSource kernel = hopperKernel("sm_90a");
  kernel.emitPtx = true;
  auto compiled = compile(kernel);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_TRUE(compiled->cubin.empty());
  EXPECT_TRUE(contains(compiled->ptx, ".target sm_90a")) << compiled->ptx;
  EXPECT_TRUE(contains(compiled->ptx, ".entry hopper_only")) << compiled->ptx;
  EXPECT_TRUE(contains(compiled->ptx, "setmaxnreg.inc.sync.aligned.u32"));
  EXPECT_EQ(compiled->ptx.find('\0'), std::string::npos);
  EXPECT_EQ(&compiled->image(), &compiled->ptx);
  EXPECT_EQ(nvrtcOptions(kernel).front(), "--gpu-architecture=compute_90a");
}

TEST(Nvrtc, SyntaxErrorCarriesLogAndNumberedSource) {
  FUSEC_REQUIRE_NVRTC();
  KernelSource kernel;
  kernel.name = "broken";
  kernel.arch = "sm_80";
  kernel.source = "extern \"C\" __global__ void broken(float *out) {\n"
                  "  float x = 1.0f\n" // missing semicolon
                  "  out[0] = x;\n"
                  "}\n";
  auto compiled = compile(kernel);
  ASSERT_FALSE(bool(compiled));
  std::string message = llvm::toString(compiled.takeError());
  EXPECT_TRUE(contains(message, "NVRTC failed to compile kernel 'broken' for "
                                "sm_80: NVRTC_ERROR_COMPILATION"))
      << message;
  EXPECT_TRUE(contains(message, "options: --gpu-architecture=sm_80 "
                                "-default-device --std=c++17"))
      << message;
  // The log, as NVRTC wrote it, names the file, the line and the problem.
  EXPECT_TRUE(
      contains(message, "NVRTC log:\nbroken.cu(3): error: expected a \";\""))
      << message;
  EXPECT_TRUE(contains(message,
                       "source of 'broken' (broken.cu):\n"
                       "1 | extern \"C\" __global__ void broken(float *out) {\n"
                       "2 |   float x = 1.0f\n"
                       "3 |   out[0] = x;\n"
                       "4 | }"))
      << message;
}

TEST(Nvrtc, LineNumbersAreAligned) {
  FUSEC_REQUIRE_NVRTC();
  KernelSource kernel;
  kernel.name = "long_broken";
  kernel.arch = "sm_80";
  for (int i = 0; i < 11; ++i)
    kernel.source += "// line " + std::to_string(i + 1) + "\n";
  kernel.source += "this is not C++\n";
  auto compiled = compile(kernel);
  ASSERT_FALSE(bool(compiled));
  std::string message = llvm::toString(compiled.takeError());
  EXPECT_TRUE(contains(message, "\n 1 | // line 1\n")) << message;
  EXPECT_TRUE(contains(message, "\n11 | // line 11\n12 | this is not C++"))
      << message;
}

TEST(Nvrtc, WarningsOfASuccessfulCompileAreKept) {
  FUSEC_REQUIRE_NVRTC();
  KernelSource kernel = axpyKernel("warned", "sm_80");
  kernel.source += "__device__ int unusedHelper() { int unused; return 0; }\n";
  auto compiled = compile(kernel);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_TRUE(contains(compiled->log, "unused")) << compiled->log;
}

TEST(Nvrtc, RejectsMalformedArchitectures) {
  FUSEC_REQUIRE_NVRTC();
  for (const char *arch : {"", "sm90", "sm_", "hopper", "sm_90b"}) {
    auto compiled = compile(axpyKernel("axpy", arch));
    ASSERT_FALSE(bool(compiled)) << arch;
    EXPECT_EQ(llvm::toString(compiled.takeError()),
              "cannot compile kernel 'axpy': '" + std::string(arch) +
                  "' is not an NVRTC architecture (expected e.g. sm_80, "
                  "sm_90a or compute_90a)");
  }
  auto virtualOnly = compile(axpyKernel("axpy", "compute_80"));
  ASSERT_FALSE(bool(virtualOnly));
  EXPECT_EQ(llvm::toString(virtualOnly.takeError()),
            "cannot compile kernel 'axpy': 'compute_80' is a virtual "
            "architecture, which gives PTX only; use sm_80 for a cubin");
}

TEST(Nvrtc, ExtraOptionsFollowTheFixedOnes) {
  FUSEC_REQUIRE_NVRTC();
  KernelSource kernel = axpyKernel("axpy", "sm_80");
  kernel.options = {"--use_fast_math", "-lineinfo"};
  EXPECT_EQ(nvrtcOptions(kernel),
            (std::vector<std::string>{"--gpu-architecture=sm_80",
                                      "-default-device", "--std=c++17",
                                      "--use_fast_math", "-lineinfo"}));
  auto compiled = compile(kernel);
  EXPECT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
}

TEST(Nvrtc, CompilesFromManyThreadsAtOnce) {
  FUSEC_REQUIRE_NVRTC();
  constexpr int kThreads = 6;
  std::vector<std::string> cubins(kThreads), failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &cubins, &failures] {
      auto compiled = compile(axpyKernel("k" + std::to_string(t), "sm_80", t));
      if (compiled)
        cubins[t] = compiled->cubin;
      else
        failures[t] = llvm::toString(compiled.takeError());
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], "") << t;
    EXPECT_TRUE(isElf(cubins[t])) << t;
  }
}

} // namespace
