//===- UnfusedPriceTest.cpp - the baseline `fusec explain` compares with ---===//
//
// A group's unfused price is what its ops cost as kernels of their own, one
// after another: the --no-fuse plan's. For a product with an epilogue that is
// the product's time plus each pointwise kernel's, not the larger of the
// summed bytes and the summed flops (which priced linear + bias + gelu +
// residual at 779 us unfused against 1088 for its four kernels, and so
// predicted fusion 0.91x where it measures 1.21x). A product alone is priced
// on the library path the --no-fuse plan takes. (An op recomputed into
// another kernel is counted once: test/lit/cli/explain-unfused-price.test.)
//
//===----------------------------------------------------------------------===//
#include "test/common/RandomGraph.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using fusec::testing::planFor;

namespace {

struct Totals {
  double predictedUs = 0, unfusedUs = 0;
  size_t steps = 0;
};

Totals totals(const std::string &text, bool fuse, const char *gemm) {
  mlir::MLIRContext ctx;
  auto plan = planFor(ctx, text, "g.json", fuse, "sm_90a", gemm);
  EXPECT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  Totals t;
  if (!plan)
    return t;
  for (const fusec::PlanStep &s : plan->steps)
    t.predictedUs += s.cost.predictedUs, t.unfusedUs += s.cost.unfusedUs;
  t.steps = plan->steps.size();
  return t;
}

TEST(UnfusedPrice, IsTheNoFusePlansPrice) {
  // Products large enough that --no-fuse runs them on cuBLASLt, with
  // epilogues of one to three pointwise kernels; SwiGLU's gate and up.
  for (const std::string &text :
       {fusec::test::linearGeluGraph(2048, 2048, 1024, "bf16"),
        fusec::test::linearGeluGraph(2048, 2048, 1024, "bf16", true),
        fusec::test::swigluGraph(2048, 2816, 1024, "bf16")}) {
    Totals fused = totals(text, true, "auto"), apart = totals(text, false, "cublaslt");
    ASSERT_GT(apart.predictedUs, 0);
    EXPECT_LT(fused.steps, apart.steps) << text;  // it did fuse
    EXPECT_NEAR(fused.unfusedUs, apart.predictedUs, 1e-6 * apart.predictedUs) << text;
  }
}

std::string file(const char *path) {
  auto buffer = llvm::MemoryBuffer::getFile(std::string(FUSEC_SOURCE_DIR) + "/" + path);
  EXPECT_TRUE(bool(buffer)) << path;
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

TEST(UnfusedPrice, TheNoFusePlanIsItsOwnBaseline) {
  // Its products priced on the library path the plan runs them on: 4-row
  // batches of grouped-query decode attention on cuBLASLt's batched-rows
  // path (priced as a plain product they made the plan 0.61x of itself).
  for (const char *path : {"examples/gqa_decode_attention.json",
                           "bench/graphs/llama_block_decode_b32.json",
                           "examples/swiglu_ffn.json"}) {
    Totals apart = totals(file(path), false, "auto");
    ASSERT_GT(apart.predictedUs, 0) << path;
    EXPECT_NEAR(apart.unfusedUs, apart.predictedUs, 1e-6 * apart.predictedUs) << path;
  }
}

} // namespace
