//===- KernelTextTest.cpp - kernels as structure, printed once ------------===//
//
// A kernel's entry point carries no plan position, and its compiled source
// no header comment, so a model's repeated layers have one body that NVRTC
// compiles once; the header (graph nodes, bytes, prediction) is added only
// for people.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/KernelSpec.h"
#include "test/unit/PlanTestUtil.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

using namespace fusec;

namespace {

TEST(KernelText, EntryNameDropsThePlanPosition) {
  EXPECT_EQ(codegen::entryName("k12_matmul_add"), "k_matmul_add");
  EXPECT_EQ(codegen::entryName("k0_max_sub_exp_sum_etc"), "k_max_sub_exp_sum_etc");
  // Not a planned kernel's name: kept.
  EXPECT_EQ(codegen::entryName("kx_mul"), "kx_mul");
  EXPECT_EQ(codegen::entryName("k12"), "k12");
  EXPECT_EQ(codegen::entryName("axpy"), "axpy");
}

TEST(KernelText, RepeatedLayersHaveOneBody) {
  auto buffer = llvm::MemoryBuffer::getFile(FUSEC_SOURCE_DIR "/test/lit/cli/Inputs/two-layers.json");
  ASSERT_TRUE(bool(buffer));
  mlir::MLIRContext ctx;
  auto plan = fusec::testing::planFor(ctx, (*buffer)->getBuffer(), "two-layers.json", true, "sm_90a");
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  std::vector<const PlanStep *> softmax;
  for (const PlanStep &s : plan->steps)
    if (s.kind == PlanStep::Kind::Kernel && s.kernel.entry == "k_max_sub_exp_sum_etc")
      softmax.push_back(&s);
  ASSERT_EQ(softmax.size(), 2u);
  const KernelLaunch &a = softmax[0]->kernel, &b = softmax[1]->kernel;
  EXPECT_NE(softmax[0]->name, softmax[1]->name);
  EXPECT_EQ(a.source, b.source);
  // The header names each layer's own nodes, and only people see it.
  EXPECT_EQ(a.source.find("// kernel "), std::string::npos);
  std::string annotatedA = codegen::annotatedSource(a), annotatedB = codegen::annotatedSource(b);
  EXPECT_NE(annotatedA, annotatedB);
  EXPECT_NE(annotatedA.find("// kernel " + softmax[0]->name + " (row_reduction)"),
            std::string::npos);
  EXPECT_NE(annotatedA.find("graph nodes: s0"), std::string::npos) << annotatedA;
  EXPECT_NE(annotatedB.find("graph nodes: s1"), std::string::npos) << annotatedB;
}

TEST(KernelText, TheWaitIsTheFirstStatement) {
  KernelText t;
  t.helpers = "__device__ int fz_h() { return 1; }\n";
  t.qualifiers = "__launch_bounds__(128)";
  t.params = {{"const float *__restrict__ ", "in0"}, {"float *__restrict__ ", "out0"}};
  t.body = "  out0[threadIdx.x] = in0[threadIdx.x];\n";
  EXPECT_EQ(codegen::printKernel(t, "k_copy"),
            std::string("__device__ int fz_h() { return 1; }\n"
                        "extern \"C\" __global__ void __launch_bounds__(128)\n"
                        "k_copy(const float *__restrict__ in0, float *__restrict__ out0) {\n") +
                codegen::detail::kAfterPrior + "  out0[threadIdx.x] = in0[threadIdx.x];\n}\n");
  t.waitPerRole = true;
  std::string perRole = codegen::printKernel(t, "k_copy");
  EXPECT_NE(perRole.find(std::string(") {\n") + codegen::detail::kWaitPerRole), std::string::npos);
  EXPECT_EQ(perRole.find("fz_after_prior();"), std::string::npos);
}

} // namespace
