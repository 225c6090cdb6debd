//===- OnlineRowsTest.cpp - sums of exp kept beside their max in one pass -===//
//
// A row too long to keep on chip is read from HBM once a phase. A sum of
// exp(x - max(x)) (softmax's and log-sum-exp's denominator) needs the max
// first, a phase later; the row kernel instead keeps it beside the max,
// rescaled as the max grows, so a log-sum-exp reads its rows once
// (codegen/RowPlan.cpp). Only streamed rows and f32 exponents take it; the
// kernels compile with NVRTC for sm_90a and sm_80. Their values are checked
// against the interpreter on the GPU (examples/long_row_softmax.json).
//
//===----------------------------------------------------------------------===//
#include "compiler/plan/PlanDesc.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

namespace fusec {
namespace {

using testing::expectKernelsCompile;
using testing::nvrtcLoads;
using testing::planFor;

/// log-sum-exp over the rows of x [rows, cols] of `dtype`, computed in
/// `compute` (a cast first where they differ); with `softmax`, the
/// probabilities are an output too.
std::string lseGraph(int rows, int cols, const char *dtype, const char *compute,
                     bool softmax = false) {
  const std::string shape = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  std::string x = "x";
  std::string nodes;
  if (std::string(dtype) != compute) {
    nodes += "{\"name\": \"xc\", \"op\": \"cast\", \"inputs\": [\"x\"], \"attrs\": {\"dtype\": \"" +
             std::string(compute) + "\"}},";
    x = "xc";
  }
  nodes +=
      "{\"name\": \"m\", \"op\": \"max\", \"inputs\": [\"" + x + "\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
      "{\"name\": \"d\", \"op\": \"sub\", \"inputs\": [\"" + x + "\", \"m\"]},"
      "{\"name\": \"e\", \"op\": \"exp\", \"inputs\": [\"d\"]},"
      "{\"name\": \"l\", \"op\": \"sum\", \"inputs\": [\"e\"], \"attrs\": {\"axes\": -1, \"keepdims\": true}},"
      "{\"name\": \"ll\", \"op\": \"log\", \"inputs\": [\"l\"]},"
      "{\"name\": \"lse\", \"op\": \"add\", \"inputs\": [\"ll\", \"m\"]},"
      "{\"name\": \"p\", \"op\": \"div\", \"inputs\": [\"e\", \"l\"]}";
  return "{\"fusec\": 1, \"name\": \"lse\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"" +
         std::string(dtype) + "\", \"shape\": " + shape + "}], \"nodes\": [" + nodes +
         "], \"outputs\": [\"lse\"" + (softmax ? ", \"p\"" : "") + "]}";
}

/// The plan's one row kernel, after checking that there is exactly one.
const PlanKernel *onlyRowKernel(const PlanDesc &plan) {
  const PlanKernel *found = nullptr;
  for (const PlanStep &st : plan.steps)
    if (st.kind == PlanStep::Kind::Kernel && st.kernel.family == "row_reduction") {
      EXPECT_EQ(found, nullptr) << "more than one row kernel";
      found = &st.kernel;
    }
  return found;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(OnlineRows, AStreamedLogSumExpReadsItsRowsOnce) {
  const bool nvrtc = nvrtcLoads();
  for (bool softmax : {false, true})
    for (const char *arch : {"sm_90a", "sm_80"}) {
      mlir::MLIRContext ctx;
      // bf16 rows of 131072 (a vocabulary projection's logits), cast to f32.
      auto plan = planFor(ctx, lseGraph(64, 131072, "bf16", "f32", softmax), "lse.json", true, arch);
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
      const PlanKernel *k = onlyRowKernel(*plan);
      ASSERT_NE(k, nullptr) << arch;
      EXPECT_NE(k->schedule.find("row streamed per phase, 1 sum(s) of exp beside their max"),
                std::string::npos)
          << k->schedule;
      // One pass for the max and the sum together; the probabilities are
      // written by a second pass over the row.
      EXPECT_EQ(count(k->source, "// phase "), 1u) << k->source;
      EXPECT_EQ(count(k->source, "fz_online_add("), 2u) << k->source;  // defined, called
      EXPECT_EQ(count(k->source, "fz_load<fz_bf16"), softmax ? 2u : 1u) << k->source;
      if (nvrtc)
        expectKernelsCompile(std::string("online lse ") + arch + (softmax ? " softmax" : ""),
                             *plan);
    }
}

TEST(OnlineRows, RowsKeptOnChipAndNarrowExponentsTakeTwoPhases) {
  struct Case {
    int cols;
    const char *dtype, *compute;
  };
  // A row of 4096 fits in registers (read once anyway); an exponent of
  // bf16 rounds each term, which the rescaled sum would not.
  for (Case c : {Case{4096, "f32", "f32"}, Case{131072, "bf16", "bf16"}}) {
    mlir::MLIRContext ctx;
    auto plan = planFor(ctx, lseGraph(64, c.cols, c.dtype, c.compute), "lse.json", true, "sm_90a");
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    const PlanKernel *k = onlyRowKernel(*plan);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->schedule.find("online"), std::string::npos) << k->schedule;
    EXPECT_EQ(count(k->source, "// phase "), 2u) << c.cols << " " << c.compute;
  }
}

} // namespace
} // namespace fusec
