//===- RowStatsTest.cpp - a product's row log-sum-exp, streamed -----------===//
//
// A log-sum-exp over a product's rows (cross-entropy's normalizer) becomes
// one kernel where streaming is predicted faster than the product and a
// row reduction; it keeps its values in the interpreter (fused against
// unfused); its kernels compile with NVRTC for sm_90a and sm_80; a
// log-softmax, whose output is the whole product, is not streamed.
//
//===----------------------------------------------------------------------===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PlanDesc.h"
#include "test/common/RandomGraph.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

namespace fusec {
namespace {

using testing::expectKernelsCompile;
using testing::nvrtcLoads;
using testing::expectSameResults;
using testing::planFor;

/// lse = log(sum(exp(x - max(x)))) + max(x) over x = h @ w^T, h [m, k], w
/// [n, k]; with `logSoftmax`, x - max - log(sum) is the output instead.
std::string lseGraph(int m, int n, int k, bool logSoftmax = false) {
  auto in = [](const char *name, int rows, int cols) {
    return std::string("{\"name\": \"") + name + "\", \"dtype\": \"bf16\", \"shape\": [" +
           std::to_string(rows) + ", " + std::to_string(cols) + "]}";
  };
  return "{\"fusec\": 1, \"name\": \"lse\", \"inputs\": [" + in("h", m, k) + "," + in("w", n, k) +
         "], \"nodes\": ["
         "{\"name\": \"wt\", \"op\": \"transpose\", \"inputs\": [\"w\"], \"attrs\": {\"perm\": [1, 0]}},"
         "{\"name\": \"logits\", \"op\": \"matmul\", \"inputs\": [\"h\", \"wt\"]},"
         "{\"name\": \"x\", \"op\": \"cast\", \"inputs\": [\"logits\"], \"attrs\": {\"dtype\": \"f32\"}},"
         "{\"name\": \"m\", \"op\": \"max\", \"inputs\": [\"x\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
         "{\"name\": \"d\", \"op\": \"sub\", \"inputs\": [\"x\", \"m\"]},"
         "{\"name\": \"e\", \"op\": \"exp\", \"inputs\": [\"d\"]},"
         "{\"name\": \"l\", \"op\": \"sum\", \"inputs\": [\"e\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
         "{\"name\": \"ll\", \"op\": \"log\", \"inputs\": [\"l\"]},"
         "{\"name\": \"lse\", \"op\": \"add\", \"inputs\": [\"ll\", \"m\"]},"
         "{\"name\": \"lsm\", \"op\": \"sub\", \"inputs\": [\"d\", \"ll\"]}],"
         "\"outputs\": [\"" + (logSoftmax ? "lsm" : "lse") + "\"]}";
}

/// The plan's streamed row statistics kernel, or null.
const PlanKernel *streamedKernel(const PlanDesc &plan) {
  for (const PlanStep &st : plan.steps)
    if (st.kind == PlanStep::Kind::Kernel && st.kernel.family == "streamed_rows")
      return &st.kernel;
  return nullptr;
}

TEST(RowStats, LogSumExpOverAProductIsOneKernel) {
  const bool nvrtc = nvrtcLoads();
  for (const char *arch : {"sm_90a", "sm_80"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, lseGraph(300, 8192, 64), "lse.json", true, arch);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    ASSERT_EQ(plan->steps.size(), 1u) << arch;
    const PlanKernel *k = streamedKernel(*plan);
    ASSERT_NE(k, nullptr) << arch;
    EXPECT_NE(k->schedule.find("the product never written"), std::string::npos) << k->schedule;
    // Hopper's TMA + wgmma GEMM where it takes the product, else the portable one.
    EXPECT_EQ(k->schedule.find("wgmma consumer") != std::string::npos,
              std::string(arch) == "sm_90a")
        << k->schedule;
    // Three row tiles of 128, 64 tile columns: a counter per row tile, then a
    // pair of floats per row and tile column.
    EXPECT_EQ(k->scratchBytes, 256u + 2u * 300u * 64u * 4u) << k->schedule;
    if (nvrtc)
      expectKernelsCompile(std::string("lse ") + arch, *plan);
  }
}

// Cross-entropy as written with labels: lse less the target's logit picked
// from the logits (sum over columns of where(iota == t, x, 0)). The pick
// rides in the same epilogue: one kernel, the logits never written, a third
// partial a row and tile; its values as the interpreter's.
TEST(RowStats, TheTargetsLogitIsPickedInTheEpilogue) {
  const bool nvrtc = nvrtcLoads();
  std::string graph = lseGraph(300, 8192, 64);
  const std::string pick =
      "{\"name\": \"col\", \"op\": \"iota\", \"attrs\": {\"shape\": [300, 8192], \"dim\": 1, \"dtype\": \"i32\"}},"
      "{\"name\": \"hit\", \"op\": \"eq\", \"inputs\": [\"col\", \"t\"]},"
      "{\"name\": \"zero\", \"op\": \"constant\", \"attrs\": {\"value\": 0, \"dtype\": \"f32\"}},"
      "{\"name\": \"xt\", \"op\": \"where\", \"inputs\": [\"hit\", \"x\", \"zero\"]},"
      "{\"name\": \"picked\", \"op\": \"sum\", \"inputs\": [\"xt\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
      "{\"name\": \"loss\", \"op\": \"sub\", \"inputs\": [\"lse\", \"picked\"]},";
  graph.replace(graph.find("{\"name\": \"lsm\""), 0, pick);
  graph.replace(graph.find("\"outputs\": [\"lse\"]"), std::string("\"outputs\": [\"lse\"]").size(),
                "\"outputs\": [\"loss\"]");
  graph.replace(graph.find("], \"nodes\""), 0,
                ", {\"name\": \"t\", \"dtype\": \"i32\", \"shape\": [300, 1]}");
  for (const char *arch : {"sm_90a", "sm_80"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, graph, "ce.json", true, arch);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << graph;
    ASSERT_EQ(plan->steps.size(), 1u) << arch;
    const PlanKernel *k = streamedKernel(*plan);
    ASSERT_NE(k, nullptr) << arch;
    // A counter per row tile, then three floats a row and tile column.
    EXPECT_EQ(k->scratchBytes, 256u + 3u * 300u * 64u * 4u) << k->schedule;
    EXPECT_NE(k->source.find("fz_pp["), std::string::npos);
    if (nvrtc)
      expectKernelsCompile(std::string("cross-entropy ") + arch, *plan);
  }
  expectSameResults(graph, 7, true);
}

// Sums that read the rows' statistics are no picks (the epilogue has each
// element's logit, not the row's max or sum): an entropy's sum of x exp(x -
// m) compiles to what the interpreter gives, without a pick of it.
TEST(RowStats, SumsOfTheStatisticsAreNoPicks) {
  std::string entropy = lseGraph(300, 4096, 64);
  entropy.replace(entropy.find("{\"name\": \"lsm\""), 0,
                  "{\"name\": \"xe\", \"op\": \"mul\", \"inputs\": [\"x\", \"e\"]},"
                  "{\"name\": \"p\", \"op\": \"sum\", \"inputs\": [\"xe\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
                  "{\"name\": \"pl\", \"op\": \"div\", \"inputs\": [\"p\", \"l\"]},"
                  "{\"name\": \"h_\", \"op\": \"sub\", \"inputs\": [\"lse\", \"pl\"]},");
  entropy.replace(entropy.find("\"outputs\": [\"lse\"]"), std::string("\"outputs\": [\"lse\"]").size(),
                  "\"outputs\": [\"h_\"]");
  for (const char *arch : {"sm_90a", "sm_80"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, entropy, "stats.json", true, arch);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << entropy;
    for (const PlanStep &st : plan->steps)
      EXPECT_EQ(st.kernel.schedule.find("picked sum"), std::string::npos) << st.kernel.schedule;
  }
  expectSameResults(entropy, 3, true);
}

// A label's log-probability picked from x - lse (a log-softmax written with
// the primitives, then a pick) reads the rows' statistics; -fusec-pick-early
// picks x instead and applies lse to the one value a row, so the loss
// streams as the picked-logit form does, with the interpreter's values.
TEST(RowStats, APickOfTheLogProbabilitiesStreams) {
  const bool nvrtc = nvrtcLoads();
  std::string nll = lseGraph(300, 4096, 64);
  nll.replace(nll.find("{\"name\": \"lsm\""), 0,
              "{\"name\": \"col\", \"op\": \"iota\", \"attrs\": {\"shape\": [300, 4096], \"dim\": 1, \"dtype\": \"i32\"}},"
              "{\"name\": \"hit\", \"op\": \"eq\", \"inputs\": [\"col\", \"t\"]},"
              "{\"name\": \"zero\", \"op\": \"constant\", \"attrs\": {\"value\": 0, \"dtype\": \"f32\"}},"
              "{\"name\": \"logp\", \"op\": \"sub\", \"inputs\": [\"x\", \"lse\"]},"
              "{\"name\": \"xt\", \"op\": \"where\", \"inputs\": [\"hit\", \"logp\", \"zero\"]},"
              "{\"name\": \"picked\", \"op\": \"sum\", \"inputs\": [\"xt\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
              "{\"name\": \"loss\", \"op\": \"neg\", \"inputs\": [\"picked\"]},");
  nll.replace(nll.find("\"outputs\": [\"lse\"]"), std::string("\"outputs\": [\"lse\"]").size(),
              "\"outputs\": [\"loss\"]");
  nll.replace(nll.find("], \"nodes\""), 0,
              ", {\"name\": \"t\", \"dtype\": \"i32\", \"shape\": [300, 1]}");
  for (const char *arch : {"sm_90a", "sm_80"}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, nll, "nll.json", true, arch);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << nll;
    ASSERT_EQ(plan->steps.size(), 1u) << arch;
    const PlanKernel *k = streamedKernel(*plan);
    ASSERT_NE(k, nullptr) << arch;
    EXPECT_NE(k->schedule.find("picked sum"), std::string::npos) << k->schedule;
    if (nvrtc)
      expectKernelsCompile(std::string("picked log-probability ") + arch, *plan);
  }
  expectSameResults(nll, 3, true);
}

// Where the whole log-softmax is the output, the product is read anyway:
// nothing is streamed.
TEST(RowStats, LogSoftmaxIsNotStreamed) {
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, lseGraph(300, 8192, 64, true), "lsm.json", true, "sm_90a");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(streamedKernel(*plan), nullptr);
}

// A long contraction is compute-bound: the product on cuBLASLt and a row
// reduction are predicted faster than the portable GEMM streaming it.
TEST(RowStats, DeclinedWherePredictedSlower) {
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, lseGraph(4096, 32768, 4096), "lse.json", true, "sm_90a");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(streamedKernel(*plan), nullptr);
  EXPECT_EQ(plan->steps.size(), 2u);  // explain's reason: test/lit/fusion/row-stats.test
}

// The GPU test's random graphs: each keeps its values in the interpreter,
// most are streamed, and a sample of their kernels compiles.
TEST(RowStats, RandomGraphs) {
  const bool nvrtc = nvrtcLoads();
  int streamed = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::string graph = fusec::test::randomRowStatsGraph(seed);
    {
      mlir::MLIRContext ctx;
      auto plan = planFor(ctx, graph, "random_row_stats.json", true, seed % 2 ? "sm_80" : "sm_90a");
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError()) << "\n" << graph;
      if (streamedKernel(*plan)) {
        ++streamed;
        EXPECT_EQ(plan->steps.size(), 1u) << graph;
        if (nvrtc && seed % 5 == 0)
          expectKernelsCompile("random row stats " + std::to_string(seed), *plan);
      }
    }
    if (seed % 4 == 0)
      expectSameResults(graph, seed, true);
  }
  EXPECT_GT(streamed, 30);
}

} // namespace
} // namespace fusec
