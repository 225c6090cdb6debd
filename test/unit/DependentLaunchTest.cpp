//===- DependentLaunchTest.cpp - kernels wait before they touch memory ----===//
//
// On sm_90+ the runtime launches each kernel beside the tail of the one before
// it (programmatic dependent launch), so every generated kernel must execute
// griddepcontrol.wait before its first global load, store, atomic or
// asynchronous copy. Checked on the PTX of
// every kernel of the examples and the bench graphs, for both GEMM choices.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Compile.h"
#include "frontends/json/GraphReader.h"
#include "runtime/Nvrtc.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace fusec;
using fusec::testing::planFor;

namespace {

/// Offset of the first instruction that may read or write memory other than
/// parameters, shared and local memory (loads, stores, atomics, reductions,
/// asynchronous copies, prefetches; generic addresses count), npos when none.
size_t firstMemoryAccess(llvm::StringRef ptx) {
  size_t offset = 0;
  for (llvm::StringRef rest = ptx; !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    llvm::StringRef op = line.ltrim();
    if (op.starts_with("@"))  // a predicate guard: @%p1 or @!%p1
      op = op.split(' ').second.ltrim();
    op = op.take_until([](char c) { return c == ' ' || c == '\t'; });
    bool access = false;
    for (const char *prefix : {"ld.", "ldu.", "st.", "atom.", "red.", "prefetch.", "multimem."})
      access |= op.starts_with(prefix);
    access &= !op.contains(".param") && !op.contains(".shared") && !op.contains(".local");
    // Copies name shared memory as one side: every asynchronous copy counts.
    if (access || op.starts_with("cp."))
      return offset;
    offset += line.size() + 1;
    rest = tail;
  }
  return llvm::StringRef::npos;
}

} // namespace

TEST(DependentLaunch, EveryKernelWaitsForThePriorGridFirst) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  std::vector<std::string> files =
      fusec::testing::graphFiles({FUSEC_SOURCE_DIR "/examples", FUSEC_SOURCE_DIR "/bench/graphs"});
  ASSERT_GE(files.size(), 40u);
  int kernels = 0;
  for (const std::string &f : files) {
    auto buffer = llvm::MemoryBuffer::getFile(f);
    ASSERT_TRUE(bool(buffer)) << f;
    for (const char *gemm : {"auto", "fusec"}) {
      mlir::MLIRContext ctx;
      auto plan = planFor(ctx, (*buffer)->getBuffer(), f, true, "sm_90a", gemm);
      ASSERT_TRUE(bool(plan)) << f << ": " << llvm::toString(plan.takeError());
      EXPECT_TRUE(plan->overlapLaunches);
      for (const PlanStep &s : plan->steps) {
        if (s.kind != PlanStep::Kind::Kernel)
          continue;
        auto k = compile({s.name, s.kernel.source, "sm_90a", {}, /*emitPtx=*/true});
        ASSERT_TRUE(bool(k)) << f << " " << s.name << ": " << llvm::toString(k.takeError());
        llvm::StringRef ptx = k->ptx;
        size_t wait = ptx.find("griddepcontrol.wait");
        ASSERT_NE(wait, llvm::StringRef::npos) << f << " " << s.name;
        EXPECT_LT(wait, firstMemoryAccess(ptx)) << f << " " << s.name;
        ++kernels;
      }
    }
  }
  EXPECT_GE(kernels, 100);
}

TEST(DependentLaunch, OlderTargetsAndTheOptionOut) {
  if (llvm::Error err = loadNvrtc())
    GTEST_SKIP() << "NVRTC not available: " << llvm::toString(std::move(err));
  auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/bench/graphs/decode_qkv_m1.json");
  ASSERT_TRUE(bool(buffer));
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, (*buffer)->getBuffer(), "decode_qkv_m1.json", true, "sm_80");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  // Before sm_90 the instructions do not exist: the kernels compile without them.
  for (const PlanStep &s : plan->steps) {
    if (s.kind != PlanStep::Kind::Kernel)
      continue;
    auto k = compile({s.name, s.kernel.source, "sm_80", {}, /*emitPtx=*/true});
    ASSERT_TRUE(bool(k)) << s.name << ": " << llvm::toString(k.takeError());
    EXPECT_EQ(llvm::StringRef(k->ptx).find("griddepcontrol"), llvm::StringRef::npos) << s.name;
  }
  // The plan carries the choice to the runtime.
  auto module = importGraphText((*buffer)->getBuffer(), "decode_qkv_m1.json", ctx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  CompileOptions o;
  o.arch = "sm_90a";
  o.overlapLaunches = false;
  if (llvm::Error err = fuseModule(**module, o))
    FAIL() << llvm::toString(std::move(err));
  auto serial = buildPlan(**module, o);
  ASSERT_TRUE(bool(serial)) << llvm::toString(serial.takeError());
  EXPECT_FALSE(serial->overlapLaunches);
}

TEST(DependentLaunch, OnlyPlansForSm90AndNewerOverlap) {
  PlanDesc plan;
  for (const char *arch : {"sm_90a", "sm_90", "sm_100a", "sm_120"}) {
    plan.arch = arch;
    EXPECT_TRUE(launchesOverlap(plan)) << arch;
  }
  for (const char *arch : {"sm_80", "sm_89", "sm_", "compute_90a", "", "sm_9"}) {
    plan.arch = arch;
    EXPECT_FALSE(launchesOverlap(plan)) << arch;
  }
  plan.arch = "sm_90a";
  plan.overlapLaunches = false;
  EXPECT_FALSE(launchesOverlap(plan));
}

TEST(DependentLaunch, TheScanFindsGuardedAndGenericAccesses) {
  EXPECT_EQ(firstMemoryAccess("\tld.param.u64 %rd1, [p];\n\tld.shared.u32 %r1, [%r2];\n"),
            llvm::StringRef::npos);
  llvm::StringRef guarded = "\tmov.u32 %r1, 0;\n\t@%p1 ld.global.nc.v4.u32 {%r1}, [%rd1];\n";
  EXPECT_EQ(firstMemoryAccess(guarded), guarded.find("\t@%p1"));
  llvm::StringRef generic = "\tcvta.to.global.u64 %rd2, %rd1;\n\tst.u32 [%rd2], %r1;\n";
  EXPECT_EQ(firstMemoryAccess(generic), generic.find("\tst.u32"));
  llvm::StringRef copy = "\tcp.async.bulk.tensor.2d.shared::cluster.global [%r1], [%rd1];\n";
  EXPECT_EQ(firstMemoryAccess(copy), 0u);  // ".shared" names the destination only
}
