//===- IndexOpsTest.cpp - gather and argmax: fusion, kernels that compile -===//
#include "compiler/dialect/FusecDialect.h"
#include "compiler/plan/PlanDesc.h"
#include "runtime/Nvrtc.h"
#include "test/unit/PlanTestUtil.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <string>

namespace fusec {
namespace {

using testing::expectKernelsCompile;
using testing::planFor;

/// Token embeddings (ids of `idType`) plus positions, then `tail` (a node
/// named y reading h): a transformer's input layer.
std::string embeddingGraph(const char *idType, const std::string &tail) {
  return std::string("{\"fusec\": 1, \"name\": \"embed\", \"inputs\": [{\"name\": \"ids\", "
                     "\"dtype\": \"") + idType + "\", \"shape\": [4, 77]}], \"parameters\": ["
         "{\"name\": \"wte\", \"dtype\": \"bf16\", \"shape\": [1000, 256]},"
         "{\"name\": \"wpe\", \"dtype\": \"bf16\", \"shape\": [77, 256]}], \"nodes\": ["
         "{\"name\": \"tok\", \"op\": \"gather\", \"inputs\": [\"wte\", \"ids\"]},"
         "{\"name\": \"h\", \"op\": \"add\", \"inputs\": [\"tok\", \"wpe\"]}," + tail +
         "], \"outputs\": [\"y\"]}";
}

// The lookup fuses into what reads it: a pointwise kernel, and a row
// kernel (a layer norm) that reads its rows from the table; the kernels
// compile, on both targets.
TEST(Gather, FusesIntoItsReadersAndCompiles) {
  bool nvrtc = true;
  if (llvm::Error err = loadNvrtc()) {
    llvm::consumeError(std::move(err));
    nvrtc = false;
  }
  const std::string tails[] = {
      "{\"name\": \"y\", \"op\": \"gelu\", \"inputs\": [\"h\"]}",
      "{\"name\": \"y\", \"op\": \"layer_norm\", \"inputs\": [\"h\"]}"};
  for (const char *arch : {"sm_90a", "sm_80"})
    for (const char *ids : {"i64", "i32"})
      for (const std::string &tail : tails) {
        mlir::MLIRContext ctx;
        std::string label = std::string(arch) + " " + ids + " " + tail;
        auto plan = planFor(ctx, embeddingGraph(ids, tail), "embed.json", true, arch);
        ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
        ASSERT_EQ(plan->steps.size(), 1u) << label;  // one kernel: gather, add and the tail
        EXPECT_NE(plan->steps[0].kernel.source.find("min(max("), std::string::npos) << label;
        if (nvrtc)
          expectKernelsCompile(label, *plan);
      }
}

// argmax decomposes into a max and a min over the same rows: one row
// kernel, which compiles for 16-bit, f32 and integer logits.
TEST(ArgMax, OneRowKernelThatCompiles) {
  bool nvrtc = true;
  if (llvm::Error err = loadNvrtc()) {
    llvm::consumeError(std::move(err));
    nvrtc = false;
  }
  for (const char *arch : {"sm_90a", "sm_80"})
    for (const char *dt : {"bf16", "f32", "i32"}) {
      mlir::MLIRContext ctx;
      std::string label = std::string(arch) + " " + dt;
      std::string graph = std::string("{\"fusec\": 1, \"name\": \"greedy\", \"inputs\": [{\"name\": "
                                      "\"logits\", \"dtype\": \"") + dt +
                          "\", \"shape\": [8, 32000]}], \"nodes\": [{\"name\": \"t\", \"op\": "
                          "\"argmax\", \"inputs\": [\"logits\"]}], \"outputs\": [\"t\"]}";
      auto plan = planFor(ctx, graph, "greedy.json", true, arch);
      ASSERT_TRUE(bool(plan)) << label << ": " << llvm::toString(plan.takeError());
      ASSERT_EQ(plan->steps.size(), 1u) << label;
      EXPECT_EQ(plan->steps[0].kernel.family, "row_reduction") << label;
      if (nvrtc)
        expectKernelsCompile(label, *plan);
    }
}

} // namespace
} // namespace fusec
