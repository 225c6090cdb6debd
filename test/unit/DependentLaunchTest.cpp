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

#include <map>

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

/// The parameter index of the tensor map each TMA copy before `end` reads:
/// the map's register traced back through cvta.param / mov to the
/// `<kernel>_param_<N>` it was taken from (-1 where it cannot be traced).
std::vector<int> tensorCopyParams(llvm::StringRef ptx, size_t end) {
  std::map<std::string, int> param;  // register -> parameter index
  std::vector<int> out;
  for (llvm::StringRef rest = ptx.take_front(end); !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    llvm::SmallVector<llvm::StringRef, 8> f;  // the line's words, punctuation dropped
    for (llvm::StringRef r = line; !r.empty();) {
      r = r.ltrim(" \t,;[]{}");
      llvm::StringRef word = r.take_until([](char c) { return llvm::StringRef(" \t,;[]{}").contains(c); });
      if (!word.empty())
        f.push_back(word);
      r = r.drop_front(word.size());
    }
    if (f.size() >= 3 && (f[0] == "mov.b64" || f[0] == "mov.u64" || f[0] == "cvta.param.u64")) {
      size_t at = f[2].rfind("_param_");
      int n = -1;
      if (at != llvm::StringRef::npos && !f[2].substr(at + 7).getAsInteger(10, n))
        param[f[1].str()] = n;
      else if (auto it = param.find(f[2].str()); it != param.end())
        param[f[1].str()] = it->second;
    } else if (!f.empty() && f[0].starts_with("cp.async.bulk.tensor.") && f.size() >= 3) {
      auto it = param.find(f[2].str());  // [dst], [map, {coords}], [bar]
      out.push_back(it == param.end() ? -1 : it->second);
    }
  }
  return out;
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
          // Only copies of the declared operand come before the first wait,
          // every other access after the last one (the consumers' own wait:
          // their branch follows the producer's in the PTX), and both roles wait.
          ++earlyKernels;
          const PlanKernel &k = s.kernel;
          ASSERT_LT(size_t(k.readsBeforeWait), k.tensorMaps.size()) << f << " " << s.name;
          size_t last = ptx.rfind("griddepcontrol.wait");
          EXPECT_NE(last, wait) << f << " " << s.name << ": one wait for both roles";
          EXPECT_LT(last, firstMemoryAccess(ptx, true)) << f << " " << s.name;
          std::vector<int> copies = tensorCopyParams(ptx, wait);
          EXPECT_FALSE(copies.empty()) << f << " " << s.name << ": no early copy";
          int weights = int(k.args.size() + (k.scratchBytes > 0 ? 1 : 0)) + k.readsBeforeWait;
          int lastMap = weights + int(k.tensorMaps.size()) - k.readsBeforeWait - 1;
          for (int p : copies)
            EXPECT_TRUE(p >= weights && p <= lastMap)
                << f << " " << s.name << ": an early copy of another operand (parameter " << p << ")";
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
  // Per call: an output over step 2's weights (updated in place) keeps that
  // step from reading them early; apart, or for a step that reads nothing
  // early, it may.
  const PlanKernel &k2 = plan->steps[2].kernel;
  int w = plan->buffers[k2.args[k2.tensorMaps[1].arg]].index;
  std::vector<unsigned long long> in(plan->inputs.size()), out(plan->outputs.size());
  unsigned long long next = 1ull << 32;
  for (size_t i = 0; i < in.size(); ++i, next += 1ull << 30)
    in[i] = next;
  for (size_t o = 0; o < out.size(); ++o, next += 1ull << 30)
    out[o] = next;
  EXPECT_TRUE(earlyReadApart(*plan, 2, in, out));
  out[0] = in[w] + plan->inputs[w].bytes() - 16;  // its last 16 bytes
  EXPECT_FALSE(earlyReadApart(*plan, 2, in, out));
  EXPECT_TRUE(earlyReadApart(*plan, 1, in, out));  // step 1's weights are apart
  out[0] = in[w] + plan->inputs[w].bytes();         // just past them
  EXPECT_TRUE(earlyReadApart(*plan, 2, in, out));
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
  // The traced map of each copy: parameter 4 through cvta, one untraceable.
  llvm::StringRef traced = "\tmov.b64 \t%rd7, k_param_4;\n\tcvta.param.u64 \t%rd9, %rd7;\n"
                           "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile [%r1], [%rd9, {%r2, %r3}], [%r4];\n"
                           "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile [%r1], [%rd8, {%r2, %r3}], [%r4];\n";
  EXPECT_EQ(tensorCopyParams(traced, traced.size()), (std::vector<int>{4, -1}));
}
