//===- DependentLaunchTest.cpp - kernels wait before they touch memory ----===//
//
// On sm_90+ the runtime launches each kernel beside the tail of the one before
// it (programmatic dependent launch), so every generated kernel must execute
// griddepcontrol.wait before its first global load, store, atomic or
// asynchronous copy; a kernel that declares an operand it reads first
// (readsBeforeWait: a decode layer's weights) may issue only TMA copies
// before it, and the runtime launches it beside the kernel ahead only where
// that operand is a graph input. Checked on the PTX of every kernel of the
// examples and the bench graphs, for both GEMM choices. (PTX order is what
// this can see; the GPU checks run with the intermediates poisoned, which
// catches a load the assembler moved above the wait.)
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
size_t firstMemoryAccess(llvm::StringRef ptx, bool allowTensorCopies = false) {
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
    if (access || (op.starts_with("cp.") && !(allowTensorCopies && op.starts_with("cp.async.bulk.tensor."))))
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
  int kernels = 0, earlyKernels = 0;
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
        bool early = s.kernel.readsBeforeWait >= 0;
        EXPECT_LT(wait, firstMemoryAccess(ptx, early)) << f << " " << s.name;
        if (early) {
          ++earlyKernels;
          EXPECT_LT(size_t(s.kernel.readsBeforeWait), s.kernel.tensorMaps.size()) << f << " " << s.name;
          EXPECT_LT(firstMemoryAccess(ptx), wait) << f << " " << s.name << ": no early copy";
        }
        ++kernels;
      }
    }
  }
  EXPECT_GE(kernels, 100);
  EXPECT_GE(earlyKernels, 4);  // the decode chains at 32 rows, --gemm fusec
}

// The runtime's rule for a kernel that reads its weights before its wait: not
// beside what ran before the plan (step 0), nor when the weights are an
// intermediate some step writes; every other step as the plan asks.
TEST(DependentLaunch, EarlyReadersOverlapOnlyAfterAKernelOfThePlanOnGraphInputs) {
  auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/bench/graphs/decode_o_chain4_m32.json");
  ASSERT_TRUE(bool(buffer));
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, (*buffer)->getBuffer(), "decode_o_chain4_m32.json", true, "sm_90a", "fusec");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  ASSERT_EQ(plan->steps.size(), 4u);
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const PlanKernel &k = plan->steps[i].kernel;
    ASSERT_EQ(k.readsBeforeWait, 1) << i;
    EXPECT_EQ(plan->buffers[k.args[k.tensorMaps[1].arg]].kind, PlanBuffer::Kind::Input) << i;
    EXPECT_EQ(stepOverlaps(*plan, i), i > 0) << i;
  }
  // The same weights as an intermediate: no step reads them early beside another.
  PlanDesc temp = *plan;
  const PlanKernel &k = temp.steps[2].kernel;
  temp.buffers[k.args[k.tensorMaps[1].arg]].kind = PlanBuffer::Kind::Temp;
  EXPECT_FALSE(stepOverlaps(temp, 2));
  EXPECT_TRUE(stepOverlaps(temp, 1));
  // Without overlapped launches, or for an older target, none overlaps.
  temp = *plan;
  temp.overlapLaunches = false;
  EXPECT_FALSE(stepOverlaps(temp, 1));
  temp = *plan;
  temp.arch = "sm_80";
  EXPECT_FALSE(stepOverlaps(temp, 1));
  EXPECT_FALSE(stepOverlaps(*plan, plan->steps.size()));  // past the end
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
  // An early reader's TMA copies pass; its other accesses still count.
  EXPECT_EQ(firstMemoryAccess(copy, true), llvm::StringRef::npos);
  std::string mixed = copy.str() + "\tcp.async.cg.shared.global [%r1], [%rd2], 16;\n";
  EXPECT_EQ(firstMemoryAccess(mixed, true), copy.size());
}
